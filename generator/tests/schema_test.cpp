// Schema types → kernel C++ types.
#include <gtest/gtest.h>

#include "model/schema.h"

namespace backendbench::model {
namespace {

struct TypeCase {
  const char* schema_type;
  bool is_write;
  const char* cpp_type;  // "" when unsupported
};

class ArgumentTypes : public ::testing::TestWithParam<TypeCase> {};

TEST_P(ArgumentTypes, MapToKernelTypes) {
  const auto type = cpp_argument_type({"x", GetParam().schema_type, GetParam().is_write});
  if (std::string(GetParam().cpp_type).empty()) {
    EXPECT_FALSE(type.has_value()) << *type;
  } else {
    ASSERT_TRUE(type.has_value());
    EXPECT_EQ(*type, GetParam().cpp_type);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Torchgen, ArgumentTypes,
    ::testing::Values(TypeCase{"Tensor", false, "const at::Tensor&"}, TypeCase{"Tensor", true, "at::Tensor&"},
                      TypeCase{"Tensor?", false, "const std::optional<at::Tensor>&"},
                      TypeCase{"Tensor[]", false, "at::TensorList"},
                      TypeCase{"Tensor?[]", false, "const c10::List<std::optional<at::Tensor>>&"},
                      TypeCase{"int", false, "int64_t"}, TypeCase{"SymInt", false, "int64_t"},
                      TypeCase{"int[]", false, "at::IntArrayRef"}, TypeCase{"SymInt[]", false, "at::IntArrayRef"},
                      TypeCase{"int[2]", false, "at::IntArrayRef"}, TypeCase{"SymInt[1]", false, "at::IntArrayRef"},
                      TypeCase{"int[]?", false, "at::OptionalIntArrayRef"}, TypeCase{"int?", false, "std::optional<int64_t>"},
                      TypeCase{"float", false, "double"}, TypeCase{"float[]?", false, "at::OptionalArrayRef<double>"},
                      TypeCase{"bool", false, "bool"}, TypeCase{"bool[3]", false, "std::array<bool, 3>"},
                      TypeCase{"Scalar", false, "const at::Scalar&"},
                      TypeCase{"Scalar?", false, "const std::optional<at::Scalar>&"},
                      TypeCase{"ScalarType?", false, "std::optional<at::ScalarType>"},
                      TypeCase{"Layout?", false, "std::optional<at::Layout>"},
                      TypeCase{"Device?", false, "std::optional<at::Device>"},
                      TypeCase{"MemoryFormat?", false, "std::optional<at::MemoryFormat>"},
                      TypeCase{"str", false, "c10::string_view"}, TypeCase{"Generator?", false, "std::optional<at::Generator>"},
                      TypeCase{"Dimname", false, ""}, TypeCase{"int", true, ""}, TypeCase{"bool[x]", false, ""}));

Schema add_tensor_schema() {
  return {"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
          {{"self", "Tensor", false}, {"other", "Tensor", false}, {"alpha", "Scalar", false}},
          {{"Tensor", false}}};
}

TEST(KernelSignature, DeclarationAndFunctionType) {
  const KernelSignature signature = kernel_signature(add_tensor_schema());
  EXPECT_TRUE(signature.unsupported.empty());
  EXPECT_EQ(signature.declaration("add__Tensor_kernel_impl"),
            "at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)");
  EXPECT_EQ(signature.function_type(), "at::Tensor(const at::Tensor&, const at::Tensor&, const at::Scalar&)");
}

TEST(KernelSignature, Returns) {
  EXPECT_EQ(cpp_return_type({}), "void");
  EXPECT_EQ(cpp_return_type({{"Tensor", true}}), "at::Tensor&");
  EXPECT_EQ(cpp_return_type({{"Tensor", false}, {"Tensor", false}}), "std::tuple<at::Tensor, at::Tensor>");
  EXPECT_EQ(cpp_return_type({{"Tensor[]", false}}), "std::vector<at::Tensor>");
  EXPECT_FALSE(cpp_return_type({{"Dimname", false}}).has_value());
}

TEST(KernelSignature, UnsupportedSaysWhy) {
  Schema schema = add_tensor_schema();
  schema.arguments.push_back({"names", "Dimname[]", false});
  EXPECT_EQ(kernel_signature(schema).unsupported, "argument 'names' has type Dimname[], which the harness cannot bind");
}

}  // namespace
}  // namespace backendbench::model
