// Unit tests of what `backendbench run` makes of a kernel folder before its build
// (planner/kernel_folder.h), of the console's tables (planner/console_table.h), and of how the report
// and the findings carry the folder's problems and non-finite figures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "backendbench/files.h"
#include "planner/console_table.h"
#include "planner/findings.h"
#include "planner/kernel_folder.h"
#include "planner/report.h"

namespace backendbench::planner {
namespace {

std::string scratch(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/kernel_folder_test_" + name;
  files::remove_tree(path);
  files::make_directories(path);
  return path;
}

void write(const std::string& path, const std::string& text) {
  files::make_directories(path.substr(0, path.find_last_of('/')));
  std::ofstream(path) << text;
}

TEST(KernelFolder, ProblemsAreFoundWithLibtorchsSchemasAndShownWhereTheRunStarted) {
  const std::string root = scratch("problems");
  write(root + "/add_/add__implementation_1.cpp", "at::Tensor& add__kernel_impl(at::Tensor& self) { return self; }\n");
  write(root + "/relu/relu_implementation_1.cpp", "at::Tensor relu_kernel_impl(const at::Tensor& self) { return self; }\n");
  const std::vector<model::KernelProblem> problems = kernel_folder_problems(root + "/", ::testing::TempDir());
  ASSERT_EQ(problems.size(), 1u);
  // libtorch's own overloads of add_ are the hint; the location is shown below where the run started.
  EXPECT_EQ(problems[0].diagnostic.file, "kernel_folder_test_problems/add_");
  EXPECT_NE(problems[0].diagnostic.expected.find("the nearest: add___Tensor (add_.Tensor), add___Scalar (add_.Scalar)"),
            std::string::npos)
      << problems[0].diagnostic.expected;
  EXPECT_EQ(left_out_paths(problems), std::set<std::string>{root + "/add_"});
  const nlohmann::json json = kernel_problems_json(problems);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["message"], problems[0].diagnostic.str());
  EXPECT_TRUE(json[0]["operator"].is_null());
  EXPECT_TRUE(json[0]["implementation"].is_null());
}

TEST(KernelFolder, TheViewLeavesOutFoldersAndFilesAndFoldersLeftWithoutAKernel) {
  const std::string root = scratch("view_source"), view = scratch("view");
  write(root + "/add_/add__implementation_1.cpp", "");
  write(root + "/relu/relu_implementation_1.cpp", "");
  write(root + "/relu/relu_implementation_2.cpp", "");
  write(root + "/mul__Tensor/mul__Tensor_implementation_1.cpp", "");
  write(root + "/mul__Tensor/helpers.h", "");
  write(root + "/notes.md", "");
  write_kernel_view(root, {root + "/add_", root + "/relu/relu_implementation_2.cpp", root + "/mul__Tensor/mul__Tensor_implementation_1.cpp"},
                    view);
  EXPECT_EQ(files::names_in(view), (std::vector<std::string>{"notes.md", "relu"}));
  EXPECT_EQ(files::names_in(view + "/relu"), std::vector<std::string>{"relu_implementation_1.cpp"});
  char target[4096] = {};
  ASSERT_GT(readlink((view + "/relu/relu_implementation_1.cpp").c_str(), target, sizeof(target) - 1), 0);
  EXPECT_EQ(std::string(target), root + "/relu/relu_implementation_1.cpp");
}

TEST(KernelFolder, AKernelAProblemLeftOutIsRunAgainByTheCommandThatSaysItsDiagnostic) {
  nlohmann::json run = {{"build_directory", "/home/me/project/build"},
                        {"kernels_directory", "/home/me/project/my kernels"},
                        {"working_directory", "/home/me/project"},
                        {"device", "cpu"}};
  run["kernel_problems"] = {{{"location", "my kernels/sub__Tensor/sub__Tensor_implementation_1.py"}}};
  Verdict verdict;
  verdict.suite = "edge";
  verdict.op = "sub.Tensor";
  verdict.backend = "impl1";
  verdict.kernel_file = "my kernels/sub__Tensor/sub__Tensor_implementation_1.py";
  EXPECT_EQ(reproduce_command(verdict, run),
            "backendbench run --suite edge --backend 'my kernels' --ops sub.Tensor --device cpu --no-timing --build build");
}

TEST(ConsoleTable, ColumnsAreAsWideAsTheirWidestCell) {
  const std::string text = table_text({{"backend"}, {"operators", true}, {"speedup", true}},
                                      {{"a-very-long-backend-name-indeed", "5", "1.000x"}, {"aten", "12", "×"}});
  EXPECT_EQ(text,
            "  backend                          operators  speedup\n"
            "  a-very-long-backend-name-indeed          5   1.000x\n"
            "  aten                                    12        ×\n");  // '×' is one character
}

TEST(ConsoleTable, ABackendIsNamedShortlyInTheTable) {
  EXPECT_EQ(short_backend_name("directory (/home/me/project/generated_kernels)"), "directory");
  EXPECT_EQ(short_backend_name("/tmp/a/very/long/path/to/kernels/"), "kernels");
  EXPECT_EQ(short_backend_name("my kernels (/x/y)"), "my kernels");
  EXPECT_EQ(short_backend_name("flag_gems (op library)"), "flag_gems (op library)");
  EXPECT_EQ(short_backend_name("aten"), "aten");
}

TEST(Report, NonFiniteFiguresOfACaseAreCarriedAsWhatTheyAre) {
  Verdict verdict;
  verdict.suite = "edge";
  verdict.op = "relu.default";
  verdict.backend = "impl2";
  verdict.frontend = "tests";
  verdict.status = Verdict::Status::kFailed;
  verdict.errors = {"wrong"};
  verdict.max_rel_error = std::numeric_limits<double>::infinity();
  verdict.max_abs_error = std::numeric_limits<double>::quiet_NaN();
  nlohmann::json run = {{"p", 1.0}, {"backends", {"k"}}, {"kernel_problems", nlohmann::json::array()}};
  const nlohmann::json data = report_data({verdict}, run);
  ASSERT_EQ(data["cases"].size(), 1u);
  EXPECT_EQ(data["cases"][0]["max_rel_error"], "Infinity");
  EXPECT_EQ(data["cases"][0]["max_abs_error"], "NaN");
  EXPECT_EQ(data["rows"][0]["max_rel_error"], "Infinity");  // a row's largest error: infinite, not "none"
}

}  // namespace
}  // namespace backendbench::planner
