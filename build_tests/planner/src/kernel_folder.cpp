// A kernel folder's problems before the build, and the view the build reads; see kernel_folder.h.
#include "planner/kernel_folder.h"

#include <algorithm>

#include "backendbench/files.h"
#include "language/naming.h"
#include "schema/torch_schema.h"

namespace backendbench::planner {

std::vector<model::KernelProblem> kernel_folder_problems(const std::string& directory, const std::string& here) {
  std::string folder = directory;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  std::vector<model::KernelProblem> problems = model::find_kernels(folder, schema::TorchSchemaSource(), /*check_contents=*/true).problems;
  for (model::KernelProblem& problem : problems) {
    std::string& file = problem.diagnostic.file;
    if (!here.empty() && file.rfind(here + "/", 0) == 0) file = file.substr(here.size() + 1);
  }
  return problems;
}

std::set<std::string> left_out_paths(const std::vector<model::KernelProblem>& problems) {
  std::set<std::string> paths;
  for (const model::KernelProblem& problem : problems) paths.insert(problem.left_out.begin(), problem.left_out.end());
  return paths;
}

void write_kernel_view(const std::string& kernels, const std::set<std::string>& left_out, const std::string& view) {
  // POSIX calls, not std::filesystem: see files.h.
  std::string root = kernels;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  files::remove_tree(view);
  files::make_directories(view);
  for (const std::string& name : files::names_in(root)) {
    const std::string path = root + "/" + name;
    if (left_out.count(path)) continue;
    if (!files::is_folder(path)) {
      files::make_link(path, view + "/" + name);
      continue;
    }
    std::vector<std::string> kept;
    for (const std::string& file : files::names_in(path)) {
      if (left_out.count(path + "/" + file) == 0) kept.push_back(file);
    }
    const bool has_kernel = std::any_of(kept.begin(), kept.end(), [&](const std::string& file) {
      const size_t dot = file.find_last_of('.');
      return dot != std::string::npos && naming::implementation_number(name, file.substr(0, dot)).has_value();
    });
    if (!has_kernel) continue;
    files::make_directories(view + "/" + name);
    for (const std::string& file : kept) files::make_link(path + "/" + file, view + "/" + name + "/" + file);
  }
}

nlohmann::json kernel_problems_json(const std::vector<model::KernelProblem>& problems) {
  nlohmann::json list = nlohmann::json::array();
  for (const model::KernelProblem& problem : problems) {
    list.push_back({{"message", problem.diagnostic.str()},
                    {"location", problem.diagnostic.file},
                    {"problem", problem.diagnostic.problem},
                    {"expected", problem.diagnostic.expected},
                    {"operator", problem.op.empty() ? nlohmann::json() : nlohmann::json(problem.op)},
                    {"implementation", problem.number ? nlohmann::json(problem.number) : nlohmann::json()},
                    {"left_out", problem.left_out}});
  }
  return list;
}

}  // namespace backendbench::planner
