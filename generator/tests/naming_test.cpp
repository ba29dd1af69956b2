// The naming module: operator ↔ folder ↔ identifier ↔ test, CTest and benchmark names.
#include <gtest/gtest.h>

#include <set>

#include "language/naming.h"

namespace backendbench::naming {
namespace {

struct FolderCase {
  const char* folder;
  const char* display;  // "" when the folder names nothing
};

class FolderNames : public ::testing::TestWithParam<FolderCase> {};

TEST_P(FolderNames, DecodeRightToLeft) {
  const auto op = OperatorName::from_folder(GetParam().folder);
  if (std::string(GetParam().display).empty()) {
    EXPECT_FALSE(op.has_value());
    return;
  }
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->display(), GetParam().display);
  EXPECT_EQ(op->space, "aten");
  // The canonical folder of the decoded operator decodes to the same operator.
  EXPECT_EQ(OperatorName::from_folder(op->folder())->display(), op->display());
}

INSTANTIATE_TEST_SUITE_P(
    Contract, FolderNames,
    ::testing::Values(FolderCase{"relu", "relu.default"}, FolderCase{"relu__default", "relu.default"},
                      FolderCase{"add", "add.Tensor"}, FolderCase{"mul", "mul.Tensor"}, FolderCase{"div", "div.Tensor"},
                      FolderCase{"sub", "sub.Tensor"}, FolderCase{"add__Tensor", "add.Tensor"},
                      FolderCase{"add__Scalar", "add.Scalar"}, FolderCase{"add___Tensor", "add_.Tensor"},
                      FolderCase{"add__out", "add.out"}, FolderCase{"_softmax", "_softmax.default"},
                      FolderCase{"_softmax__default", "_softmax.default"},
                      FolderCase{"native_layer_norm", "native_layer_norm.default"},
                      FolderCase{"sum__dim_IntList", "sum.dim_IntList"}, FolderCase{"__and__", "__and__.default"},
                      FolderCase{"__and____Tensor", "__and__.Tensor"}, FolderCase{"leaky_relu", "leaky_relu.default"},
                      FolderCase{"relu__", "relu__.default"}, FolderCase{"9relu", ""}, FolderCase{"", ""},
                      FolderCase{"re-lu", ""}, FolderCase{"relu.default", ""}));

TEST(OperatorName, FromTrace) {
  EXPECT_EQ(OperatorName::from_trace("aten.add.Tensor")->display(), "add.Tensor");
  EXPECT_EQ(OperatorName::from_trace("aten.relu")->display(), "relu.default");
  EXPECT_EQ(OperatorName::from_trace("aten._softmax.default")->folder(), "_softmax__default");
  EXPECT_FALSE(OperatorName::from_trace("add").has_value());
  EXPECT_FALSE(OperatorName::from_trace("aten.add.Tensor.x").has_value());
  EXPECT_FALSE(OperatorName::from_trace("aten..Tensor").has_value());
}

TEST(OperatorName, FromUser) {
  EXPECT_EQ(OperatorName::from_user("add")->display(), "add.Tensor");
  EXPECT_EQ(OperatorName::from_user("relu")->display(), "relu.default");
  EXPECT_EQ(OperatorName::from_user("add.Scalar")->display(), "add.Scalar");
  EXPECT_EQ(OperatorName::from_user("aten.add.Scalar")->display(), "add.Scalar");
  EXPECT_FALSE(OperatorName::from_user("add..Scalar").has_value());
}

TEST(OperatorName, Spellings) {
  const OperatorName op{"aten", "add_", "Tensor"};
  EXPECT_EQ(op.trace_name(), "aten.add_.Tensor");
  EXPECT_EQ(op.schema_name(), "aten::add_");
  EXPECT_EQ(op.schema_overload(), "Tensor");
  EXPECT_EQ(op.display(), "add_.Tensor");
  EXPECT_EQ(op.folder(), "add___Tensor");
  EXPECT_EQ((OperatorName{"aten", "relu", "default"}.schema_overload()), "");
}

TEST(Naming, KernelFilesAndFunctions) {
  EXPECT_EQ(kernel_function("add__Tensor"), "add__Tensor_kernel_impl");
  EXPECT_EQ(kernel_function("relu"), "relu_kernel_impl");
  EXPECT_EQ(implementation_stem("relu", 3), "relu_implementation_3");
  EXPECT_EQ(implementation_number("relu", "relu_implementation_1"), 1);
  EXPECT_EQ(implementation_number("relu", "relu_implementation_12"), 12);
  EXPECT_FALSE(implementation_number("relu", "relu_implementation_01").has_value());
  EXPECT_FALSE(implementation_number("relu", "relu_implementation_").has_value());
  EXPECT_EQ(implementation_number("relu", "relu_implementation_v2"), 2);  // the original's LLM files
  EXPECT_FALSE(implementation_number("relu", "relu_implementation_v").has_value());
  EXPECT_FALSE(implementation_number("relu", "relu_implementation_vv2").has_value());
  EXPECT_FALSE(implementation_number("relu", "gelu_implementation_1").has_value());
  EXPECT_FALSE(implementation_number("relu", "relu_impl_1").has_value());
  EXPECT_EQ(variant_name(2), "impl2");
}

TEST(Naming, TestAndBenchmarkNames) {
  const OperatorName op{"aten", "add", "Tensor"};
  EXPECT_EQ(ctest_name("smoke", op, "aten"), "smoke/add.Tensor/aten");
  EXPECT_EQ(ctest_name("torchbench", op, "impl1"), "torchbench/add.Tensor/impl1");
  EXPECT_EQ(ctest_name("torchbench", op, "aten", 3, 7), "torchbench/add.Tensor/aten/part3of7");
  EXPECT_EQ(result_file("torchbench", op, "aten", ".xml"), "torchbench/add.Tensor/aten.xml");
  EXPECT_EQ(result_file("torchbench", op, "aten", ".verdicts.jsonl", 3, 7), "torchbench/add.Tensor/aten.part3of7.verdicts.jsonl");
  EXPECT_EQ(pack_ctest_name("torchbench", 2, 9), "torchbench/pack2of9");
  EXPECT_EQ(pack_result_file("torchbench", 2, 9, ".verdicts.jsonl"), "torchbench/pack2of9.verdicts.jsonl");
  EXPECT_EQ(benchmark_name("torchbench", op, "f16_2x3_0a1b2c3d", "impl1"), "torchbench/add.Tensor/f16_2x3_0a1b2c3d/impl1");
  EXPECT_EQ(gtest_suite("smoke", op) + "." + gtest_test("aten", "f32_4"), "smoke/add__Tensor.aten/f32_4");
}

TEST(Naming, CaseNamesAreContentDerivedIdentifiers) {
  const std::string a = case_name("f16_2x3", "((T([2, 3], f16),), {})");
  const std::string b = case_name("f16_2x3", "((T([2, 3], f16, stride=(1, 2)),), {})");
  EXPECT_EQ(a, case_name("f16_2x3", "((T([2, 3], f16),), {})"));  // deterministic
  EXPECT_NE(a, b);                                                // content, not position
  EXPECT_EQ(a.rfind("f16_2x3_", 0), 0u);
  EXPECT_TRUE(is_identifier(a));
  EXPECT_EQ(case_name("", "((1,), {})").rfind("scalars_", 0), 0u);
  const std::string long_name = case_name(std::string(100, 'x'), "x");
  EXPECT_EQ(long_name.size(), 48u + 1 + 8);
  EXPECT_TRUE(is_identifier(case_name("f16_2-3", "y")));
}

TEST(Naming, StableHashIsFnv1a) {
  EXPECT_EQ(stable_hash(""), 14695981039346656037ull);
  EXPECT_EQ(stable_hash("a"), 0xaf63dc4c8601ec8cull);
}

TEST(Naming, TraceAliases) {
  EXPECT_EQ(resolve_trace_alias("aten.sum.SymInt"), "aten.sum.dim_IntList");
  EXPECT_EQ(resolve_trace_alias("aten.sum.default"), "aten.sum.default");
}

TEST(Naming, Identifiers) {
  EXPECT_TRUE(is_identifier("relu__default"));
  EXPECT_FALSE(is_identifier("relu.default"));
  EXPECT_FALSE(is_identifier(""));
}

TEST(Naming, FileSuitesAreNamedAfterTheirStem) {
  EXPECT_EQ(file_suite_name("traces/my-model.txt"), "my_model");
  EXPECT_EQ(file_suite_name("/data/hf_train.dataset.jsonl"), "hf_train");
  EXPECT_EQ(file_suite_name("/data/operator_inp_logs/"), "operator_inp_logs");
  EXPECT_EQ(file_suite_name("3d-unet.txt"), "_3d_unet");
  EXPECT_TRUE(is_identifier(file_suite_name("a b+c.txt")));
}

TEST(Naming, PythonKernelsThatImportTritonNeedCuda) {
  EXPECT_TRUE(python_kernel_needs_cuda("import torch\nimport triton\nimport triton.language as tl\n"));
  EXPECT_TRUE(python_kernel_needs_cuda("  from triton import language as tl"));
  EXPECT_FALSE(python_kernel_needs_cuda("import torch\n# import triton would be faster\ndef f(x): return x"));
  EXPECT_FALSE(python_kernel_needs_cuda("import tritonish"));
}

TEST(Naming, CudaKernelsWithADevicePartNameItsMacroInADirective) {
  EXPECT_TRUE(cuda_kernel_has_device_part("#include <cstdint>\n#ifdef BACKENDBENCH_DEVICE_PART\n__global__ void k();\n#endif\n"));
  EXPECT_TRUE(cuda_kernel_has_device_part("  #if defined(BACKENDBENCH_DEVICE_PART)\n#endif"));
  EXPECT_TRUE(cuda_kernel_has_device_part("#ifndef BACKENDBENCH_DEVICE_PART\n#endif"));
  // A mention outside a directive is not the form: nvcc would otherwise never see the kernels.
  EXPECT_FALSE(cuda_kernel_has_device_part("// BACKENDBENCH_DEVICE_PART would split this file\n__global__ void k();"));
  EXPECT_FALSE(cuda_kernel_has_device_part("#include <ATen/ATen.h>\n#ifdef __CUDACC__\n#endif\n"));
}

}  // namespace
}  // namespace backendbench::naming
