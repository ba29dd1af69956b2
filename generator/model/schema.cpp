// Schema type → C++ type mapping (the subset of torchgen's that kernels use).
#include "model/schema.h"

#include <map>

namespace backendbench::model {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// bool[3] → 3
std::optional<std::string> fixed_size(const std::string& type, const std::string& element) {
  if (type.rfind(element + "[", 0) != 0 || !ends_with(type, "]")) return std::nullopt;
  std::string digits = type.substr(element.size() + 1, type.size() - element.size() - 2);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return digits;
}

}  // namespace

std::optional<std::string> cpp_argument_type(const SchemaArgument& argument) {
  static const std::map<std::string, std::string> kTypes = {
      {"Tensor", "const at::Tensor&"},
      {"Tensor?", "const std::optional<at::Tensor>&"},
      {"Tensor[]", "at::TensorList"},
      {"Tensor?[]", "const c10::List<std::optional<at::Tensor>>&"},
      {"int", "int64_t"},
      {"SymInt", "int64_t"},
      {"int?", "std::optional<int64_t>"},
      {"SymInt?", "std::optional<int64_t>"},
      {"int[]", "at::IntArrayRef"},
      {"SymInt[]", "at::IntArrayRef"},
      {"int[]?", "at::OptionalIntArrayRef"},
      {"SymInt[]?", "at::OptionalIntArrayRef"},
      {"float", "double"},
      {"float?", "std::optional<double>"},
      {"float[]", "at::ArrayRef<double>"},
      {"float[]?", "at::OptionalArrayRef<double>"},
      {"bool", "bool"},
      {"bool?", "std::optional<bool>"},
      {"Scalar", "const at::Scalar&"},
      {"Scalar?", "const std::optional<at::Scalar>&"},
      {"ScalarType", "at::ScalarType"},
      {"ScalarType?", "std::optional<at::ScalarType>"},
      {"Layout", "at::Layout"},
      {"Layout?", "std::optional<at::Layout>"},
      {"Device", "at::Device"},
      {"Device?", "std::optional<at::Device>"},
      {"MemoryFormat", "at::MemoryFormat"},
      {"MemoryFormat?", "std::optional<at::MemoryFormat>"},
      {"str", "c10::string_view"},
      {"str?", "std::optional<c10::string_view>"},
      {"Generator?", "std::optional<at::Generator>"},
  };
  if (argument.is_write) {
    if (argument.type == "Tensor") return std::string("at::Tensor&");
    if (argument.type == "Tensor[]") return std::string("at::TensorList");
    return std::nullopt;
  }
  if (auto found = kTypes.find(argument.type); found != kTypes.end()) return found->second;
  // Fixed-size lists: int[2], SymInt[2] behave as int[]; bool[3] is std::array<bool, 3>.
  if (fixed_size(argument.type, "int") || fixed_size(argument.type, "SymInt")) return std::string("at::IntArrayRef");
  if (auto size = fixed_size(argument.type, "bool")) return "std::array<bool, " + *size + ">";
  return std::nullopt;
}

std::optional<std::string> cpp_return_type(const std::vector<SchemaReturn>& returns) {
  static const std::map<std::string, std::string> kTypes = {
      {"Tensor", "at::Tensor"}, {"Tensor[]", "std::vector<at::Tensor>"}, {"int", "int64_t"},
      {"SymInt", "int64_t"},    {"float", "double"},                     {"bool", "bool"},
      {"Scalar", "at::Scalar"}, {"ScalarType", "at::ScalarType"}};
  auto one = [](const SchemaReturn& value) -> std::optional<std::string> {
    if (value.is_write && value.type == "Tensor") return std::string("at::Tensor&");
    if (value.is_write) return std::nullopt;
    auto found = kTypes.find(value.type);
    if (found == kTypes.end()) return std::nullopt;
    return found->second;
  };
  if (returns.empty()) return std::string("void");
  if (returns.size() == 1) return one(returns[0]);
  std::string tuple = "std::tuple<";
  for (size_t i = 0; i < returns.size(); ++i) {
    auto type = one(returns[i]);
    if (!type) return std::nullopt;
    tuple += (i > 0 ? ", " : "") + *type;
  }
  return tuple + ">";
}

KernelSignature kernel_signature(const Schema& schema) {
  KernelSignature signature;
  for (const SchemaArgument& argument : schema.arguments) {
    auto type = cpp_argument_type(argument);
    if (!type) {
      signature.unsupported = "argument '" + argument.name + "' has type " + argument.type +
                              (argument.is_write ? " (written)" : "") + ", which the harness cannot bind";
      return signature;
    }
    signature.parameter_types.push_back(*type);
    signature.parameter_names.push_back(argument.name);
  }
  auto return_type = cpp_return_type(schema.returns);
  if (!return_type) {
    signature.unsupported = "its return type is not one the harness can compare";
    return signature;
  }
  signature.return_type = *return_type;
  return signature;
}

std::string KernelSignature::function_type() const {
  std::string text = return_type + "(";
  for (size_t i = 0; i < parameter_types.size(); ++i) text += (i > 0 ? ", " : "") + parameter_types[i];
  return text + ")";
}

std::string KernelSignature::declaration(const std::string& function_name) const {
  std::string text = return_type + " " + function_name + "(";
  for (size_t i = 0; i < parameter_types.size(); ++i) {
    text += (i > 0 ? ", " : "") + parameter_types[i] + " " + parameter_names[i];
  }
  return text + ")";
}

}  // namespace backendbench::model
