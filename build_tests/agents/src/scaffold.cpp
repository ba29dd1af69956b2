// Scaffolding a kernel; see scaffold.h.
#include "agents/scaffold.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "language/diagnostic.h"
#include "emit/template.h"
#include "language/naming.h"

namespace backendbench::agents {
namespace {

bool is_directory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::vector<std::string> entries_of(const std::string& directory) {
  std::vector<std::string> names;
  if (DIR* handle = opendir(directory.c_str())) {
    while (const dirent* entry = readdir(handle)) names.push_back(entry->d_name);
    closedir(handle);
  }
  return names;
}

}  // namespace

ScaffoldedKernel scaffold_kernel(const std::string& user_op, const std::string& kernels_directory, bool cuda,
                                 const model::SchemaSource& schemas, const std::string& templates_directory,
                                 const std::string& torch_version) {
  const char* form = "an ATen operator of the installed libtorch: a base name (relu, add) or an overload (add.Tensor, aten.mul.Tensor)";
  const auto op = naming::OperatorName::from_user(user_op);
  if (!op) throw error_at("new", "'" + user_op + "' is not an operator name", form);
  const auto schema = schemas.find(*op);
  if (!schema) throw error_at("new", "unknown operator '" + op->display() + "'", form);
  const model::KernelSignature signature = model::kernel_signature(*schema);
  if (!signature.unsupported.empty()) {
    throw error_at("new", op->display() + " cannot be a kernel of this harness (" + signature.unsupported + ")",
                   "an operator whose arguments and results the harness can bind");
  }
  if (!is_directory(kernels_directory)) {
    throw error_at("--kernels", "kernel folder '" + kernels_directory + "' does not exist", "an existing folder");
  }
  // The folder already holding this operator's kernels, else the spelling the user chose.
  const bool bare = user_op.find('.') == std::string::npos;
  std::string folder = bare ? user_op : op->folder();
  for (const std::string& candidate : {user_op, op->folder(), op->base}) {
    const auto named = naming::OperatorName::from_folder(candidate);
    if (named && *named == *op && is_directory(kernels_directory + "/" + candidate)) {
      folder = candidate;
      break;
    }
  }
  int number = 1;
  for (const std::string& name : entries_of(kernels_directory + "/" + folder)) {
    const std::string stem = name.substr(0, name.find('.'));
    if (const auto used = naming::implementation_number(folder, stem)) number = std::max(number, *used + 1);
  }
  ScaffoldedKernel kernel;
  kernel.folder = folder;
  kernel.op = op->display();
  kernel.backend = naming::variant_name(number);
  kernel.path = kernels_directory + "/" + folder + "/" + naming::implementation_stem(folder, number) + (cuda ? ".cu" : ".cpp");
  const std::string function = naming::kernel_function(folder);
  kernel.declaration = signature.declaration(function);
  const std::string relative = folder + "/" + kernel.path.substr(kernel.path.find_last_of('/') + 1);
  const emit::CodeTemplate code =
      emit::CodeTemplate::load(templates_directory + (cuda ? "/new_kernel.cu.in" : "/new_kernel.cpp.in"));
  kernel.text = code.render({{"operator", kernel.op},
                             {"schema", schema->text},
                             {"torch_version", torch_version},
                             {"run_command", "backendbench run --suite smoke,edge --backend directory --ops " + kernel.op},
                             {"declaration", kernel.declaration},
                             {"function", function},
                             {"file", relative}});
  return kernel;
}

void write_scaffold(const ScaffoldedKernel& kernel) {
  const std::string folder = kernel.path.substr(0, kernel.path.find_last_of('/'));
  if (!is_directory(folder) && mkdir(folder.c_str(), 0755) != 0) {
    throw error_at(folder, std::string("cannot create the folder (") + std::strerror(errno) + ")", "a writable kernel folder");
  }
  struct stat info {};
  if (stat(kernel.path.c_str(), &info) == 0) throw error_at(kernel.path, "exists already", "a new file");
  std::ofstream out(kernel.path);
  out << kernel.text;
  if (!out.flush()) throw error_at(kernel.path, "cannot write the file", "a writable kernel folder");
}

}  // namespace backendbench::agents
