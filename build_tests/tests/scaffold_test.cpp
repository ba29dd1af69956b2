// Unit tests of `backendbench new`'s scaffold: agents/scaffold.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "agents/scaffold.h"
#include "schema/torch_schema.h"
#include "cli_test_support.h"

namespace backendbench::cli {
namespace {

using namespace test;

TEST(Scaffold, WritesTheExactSignatureIntoTheNextFreeFile) {
  Scratch scratch;
  scratch.write("kernels/add/add_implementation_1.cpp", "");
  scratch.write("kernels/add/add_implementation_3.cu", "");
  const schema::TorchSchemaSource schemas;
  const std::string templates = std::string(BACKENDBENCH_TEST_SOURCE_DIR) + "/templates";
  const ScaffoldedKernel add = scaffold_kernel("add.Tensor", scratch.path() + "/kernels", false, schemas, templates, "2.x");
  EXPECT_EQ(add.path, scratch.path() + "/kernels/add/add_implementation_4.cpp");  // the folder add already serves add.Tensor
  EXPECT_EQ(add.backend, "impl4");
  EXPECT_EQ(add.declaration,
            "at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)");
  EXPECT_NE(add.text.find(add.declaration + " {"), std::string::npos);
  EXPECT_NE(add.text.find("TORCH_CHECK(false, \"add_kernel_impl (add/add_implementation_4.cpp) is not written yet\")"),
            std::string::npos);
  const ScaffoldedKernel relu = scaffold_kernel("aten.relu.default", scratch.path() + "/kernels", true, schemas, templates, "2.x");
  EXPECT_EQ(relu.path, scratch.path() + "/kernels/relu__default/relu__default_implementation_1.cu");
  EXPECT_NE(relu.text.find("getCurrentCUDAStream"), std::string::npos);
  write_scaffold(relu);
  std::ifstream written(relu.path);
  EXPECT_TRUE(written.good());
  try {
    write_scaffold(relu);
    ADD_FAILURE() << "replaced an existing kernel";
  } catch (const DiagnosticError& error) {
    EXPECT_NE(std::string(error.what()).find("exists already"), std::string::npos);
  }
}

TEST(Scaffold, UnknownOperator) {
  Scratch scratch;
  try {
    scaffold_kernel("frobnicate", scratch.path(), false, schema::TorchSchemaSource(), BACKENDBENCH_TEST_SOURCE_DIR "/templates", "");
    ADD_FAILURE() << "no error";
  } catch (const DiagnosticError& error) {
    EXPECT_EQ(std::string(error.what()).substr(0, 50), "new: error: unknown operator 'frobnicate.default';");
  }
}

}  // namespace
}  // namespace backendbench::cli
