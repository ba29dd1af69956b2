// Case text → IValues for a schema (inputs.h): the conversion of each trace value follows the schema
// argument's type, so `1` becomes an int, a double or a Scalar as the operator expects.
#include <ATen/ScalarOps.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <functional>
#include <limits>
#include <map>
#include <stdexcept>

#include "backendbench/inputs.h"

#include "backendbench/index_rules.h"
#include "language/parser.h"
#include "language/printer.h"

namespace backendbench {
namespace {

using parse::Value;

at::ScalarType dtype_of(const std::string& name) {
  static const std::map<std::string, at::ScalarType> kDtypes = {
      {"bf16", at::kBFloat16}, {"f16", at::kHalf}, {"f32", at::kFloat}, {"f64", at::kDouble},
      {"c32", at::kComplexHalf}, {"c64", at::kComplexFloat}, {"c128", at::kComplexDouble},
      {"i8", at::kChar}, {"i16", at::kShort}, {"i32", at::kInt}, {"i64", at::kLong},
      {"b8", at::kBool}, {"u8", at::kByte},
      // torch.<name> spellings
      {"float16", at::kHalf}, {"half", at::kHalf}, {"bfloat16", at::kBFloat16}, {"float32", at::kFloat},
      {"float", at::kFloat}, {"float64", at::kDouble}, {"double", at::kDouble}, {"complex32", at::kComplexHalf},
      {"chalf", at::kComplexHalf}, {"complex64", at::kComplexFloat}, {"cfloat", at::kComplexFloat},
      {"complex128", at::kComplexDouble}, {"cdouble", at::kComplexDouble}, {"int8", at::kChar},
      {"int16", at::kShort}, {"short", at::kShort}, {"int32", at::kInt}, {"int", at::kInt},
      {"int64", at::kLong}, {"long", at::kLong}, {"uint8", at::kByte}, {"bool", at::kBool}};
  auto found = kDtypes.find(name);
  if (found == kDtypes.end()) throw std::invalid_argument("unknown dtype '" + name + "'");
  return found->second;
}

class Materializer {
 public:
  Materializer(uint64_t seed, c10::Device device)
      : generator_(at::make_generator<at::CPUGeneratorImpl>(seed)), device_(device) {}

  // The case's generator, for draws that follow the conversion (index rules).
  at::Generator& generator() { return generator_; }

  c10::IValue convert(const Value& value, const c10::TypePtr& type, const std::string& argument) {
    const std::string text = parse::print(value);
    auto mismatch = [&](const std::string& expected) {
      return std::invalid_argument("argument '" + argument + "' has type " + type->str() + " but the case gives " +
                                   text + "; expected " + expected);
    };
    switch (type->kind()) {
      case c10::TypeKind::OptionalType:
        if (value.as<parse::NoneValue>()) return c10::IValue();
        return convert(value, type->expectRef<c10::OptionalType>().getElementType(), argument);
      case c10::TypeKind::TensorType:
        if (const auto* tensor = value.as<parse::TensorValue>()) return make_tensor(*tensor);
        if (auto scalar = number_of(value)) return wrapped_number(*scalar);
        throw mismatch("T([shape], dtype) or a number");
      case c10::TypeKind::ListType:
        return convert_list(value, type->expectRef<c10::ListType>().getElementType(), argument, mismatch);
      case c10::TypeKind::IntType:
      case c10::TypeKind::SymIntType:
        if (const auto* number = value.as<parse::IntValue>()) return number->value;
        if (const auto* flag = value.as<parse::BoolValue>()) return static_cast<int64_t>(flag->value);
        throw mismatch("an integer");
      case c10::TypeKind::FloatType:
      case c10::TypeKind::SymFloatType:
        if (const auto* number = value.as<parse::FloatValue>()) return number->value;
        if (const auto* number = value.as<parse::IntValue>()) return static_cast<double>(number->value);
        throw mismatch("a number");
      case c10::TypeKind::BoolType:
      case c10::TypeKind::SymBoolType:
        if (const auto* flag = value.as<parse::BoolValue>()) return flag->value;
        throw mismatch("True or False");
      case c10::TypeKind::NumberType:
        if (auto scalar = number_of(value)) return *scalar;
        throw mismatch("a number");
      case c10::TypeKind::ScalarTypeType:
        if (const auto* dtype = value.as<parse::DtypeValue>()) return dtype_of(dtype->abbreviation);
        if (const auto* constant = value.as<parse::TorchConstantValue>()) return dtype_of(constant->name);
        throw mismatch("a dtype such as f16 or torch.float16");
      case c10::TypeKind::LayoutType:
        if (const auto* constant = value.as<parse::TorchConstantValue>()) {
          if (constant->name == "strided") return at::kStrided;
          if (constant->name == "sparse_coo") return at::kSparse;
        }
        throw mismatch("torch.strided or torch.sparse_coo");
      case c10::TypeKind::MemoryFormatType:
        if (const auto* constant = value.as<parse::TorchConstantValue>()) {
          if (constant->name == "contiguous_format") return at::MemoryFormat::Contiguous;
          if (constant->name == "channels_last") return at::MemoryFormat::ChannelsLast;
          if (constant->name == "channels_last_3d") return at::MemoryFormat::ChannelsLast3d;
          if (constant->name == "preserve_format") return at::MemoryFormat::Preserve;
        }
        throw mismatch("a memory format such as torch.channels_last");
      case c10::TypeKind::DeviceObjType:
        if (const auto* device = value.as<parse::DeviceValue>()) return device_for(device->spec);
        if (const auto* device = value.as<parse::StringValue>()) return device_for(device->value);
        throw mismatch("a device such as 'cuda' or \"torch.device('cpu')\"");
      case c10::TypeKind::StringType:
        if (const auto* string = value.as<parse::StringValue>()) return string->value;
        throw mismatch("a string");
      default:
        throw mismatch("a value of a type the harness supports");
    }
  }

 private:
  static std::optional<at::Scalar> number_of(const Value& value) {
    if (const auto* number = value.as<parse::IntValue>()) return at::Scalar(number->value);
    if (const auto* number = value.as<parse::FloatValue>()) return at::Scalar(number->value);
    if (const auto* flag = value.as<parse::BoolValue>()) return at::Scalar(flag->value);
    return std::nullopt;
  }

  // A number where the schema wants a Tensor: what Python's argument parser passes (a 0-dim
  // CPU tensor marked as a wrapped number, which type promotion treats like a Python scalar).
  static at::Tensor wrapped_number(const at::Scalar& scalar) {
    at::Tensor tensor = c10::scalar_to_tensor(scalar);
    tensor.unsafeGetTensorImpl()->set_wrapped_number(true);
    return tensor;
  }

  template <typename Mismatch>
  c10::IValue convert_list(const Value& value, const c10::TypePtr& element, const std::string& argument,
                           const Mismatch& mismatch) {
    const auto* sequence = value.as<parse::SequenceValue>();
    const c10::TypeKind kind = element->kind();
    if (sequence == nullptr) {
      // Python lets a single int stand for int[N] (e.g. dim=1 for int[1]).
      if ((kind == c10::TypeKind::IntType || kind == c10::TypeKind::SymIntType) && value.as<parse::IntValue>()) {
        return std::vector<int64_t>{value.as<parse::IntValue>()->value};
      }
      throw mismatch("a list");
    }
    if (kind == c10::TypeKind::TensorType) {
      std::vector<at::Tensor> tensors;
      for (const Value& item : sequence->items) tensors.push_back(convert(item, element, argument).toTensor());
      return tensors;
    }
    if (kind == c10::TypeKind::IntType || kind == c10::TypeKind::SymIntType) {
      std::vector<int64_t> numbers;
      for (const Value& item : sequence->items) numbers.push_back(convert(item, element, argument).toInt());
      return numbers;
    }
    if (kind == c10::TypeKind::FloatType) {
      std::vector<double> numbers;
      for (const Value& item : sequence->items) numbers.push_back(convert(item, element, argument).toDouble());
      return numbers;
    }
    if (kind == c10::TypeKind::BoolType) {
      c10::List<bool> flags;
      for (const Value& item : sequence->items) flags.push_back(convert(item, element, argument).toBool());
      return flags;
    }
    if (kind == c10::TypeKind::OptionalType &&
        element->expectRef<c10::OptionalType>().getElementType()->kind() == c10::TypeKind::TensorType) {
      c10::List<std::optional<at::Tensor>> tensors;
      for (const Value& item : sequence->items) {
        c10::IValue converted = convert(item, element, argument);
        tensors.push_back(converted.isNone() ? std::optional<at::Tensor>() : converted.toTensor());
      }
      return tensors;
    }
    if (kind == c10::TypeKind::NumberType) {
      std::vector<c10::IValue> scalars;
      for (const Value& item : sequence->items) scalars.push_back(convert(item, element, argument));
      return c10::List<at::Scalar>(c10::fmap(scalars, [](const c10::IValue& v) { return v.toScalar(); }));
    }
    throw mismatch("a list of a kind the harness supports");
  }

  c10::Device device_for(const std::string& spec) {
    // Traces were recorded on CUDA machines: 'cuda' means the device this run uses.
    c10::Device device(spec);
    return device.is_cuda() ? device_ : device;
  }

  // Random values from the case's generator: normal floats (negatives, zeros' neighbourhood,
  // magnitudes above 1), integers in [-9, 9] (u8: [0, 9]), random booleans. Large tensors for
  // a CUDA device are drawn there, by a CUDA generator seeded from the case's generator: the
  // values stay deterministic per case and device, and drawing 100M values takes milliseconds
  // instead of a second on the host.
  at::Tensor draw(int64_t elements, at::ScalarType dtype, c10::Device device) {
    at::Generator generator = generator_;
    auto options = at::TensorOptions().device(at::kCPU);
    if (device.is_cuda() && elements >= kDeviceDrawElements) {
      const int64_t seed = at::randint(0, std::numeric_limits<int64_t>::max(), {1}, generator_,
                                       at::TensorOptions().dtype(at::kLong)).item<int64_t>();
      generator = at::globalContext().defaultGenerator(device).clone();
      generator.set_current_seed(static_cast<uint64_t>(seed));
      options = options.device(device);
    }
    if (at::isFloatingType(dtype)) return at::randn({elements}, generator, options.dtype(at::kFloat)).to(dtype);
    if (at::isComplexType(dtype)) return at::randn({elements}, generator, options.dtype(at::kComplexFloat)).to(dtype);
    if (dtype == at::kBool) return at::randint(0, 2, {elements}, generator, options.dtype(at::kLong)).to(dtype);
    const int64_t low = dtype == at::kByte ? 0 : -9;
    return at::randint(low, 10, {elements}, generator, options.dtype(at::kLong)).to(dtype);
  }
  static constexpr int64_t kDeviceDrawElements = 1 << 16;

  // Values the case spells out (values=[...]): exact, whatever the draw.
  static at::Tensor given(const std::vector<double>& values, at::ScalarType dtype) {
    const auto cpu = at::TensorOptions().device(at::kCPU).dtype(at::kDouble);
    if (values.empty()) return at::empty({0}, cpu.dtype(dtype));
    return at::from_blob(const_cast<double*>(values.data()), {static_cast<int64_t>(values.size())}, cpu).to(dtype);
  }

  at::Tensor make_tensor(const parse::TensorValue& spec) {
    const at::ScalarType dtype = dtype_of(spec.dtype);
    std::vector<int64_t> strides;
    if (spec.stride) {
      strides = *spec.stride;
    } else {
      const c10::DimVector contiguous = c10::contiguous_strides(spec.shape);
      strides.assign(contiguous.begin(), contiguous.end());
    }
    const int64_t extent = parse::storage_extent(spec.shape, spec.stride).value();  // the parser checked it fits
    c10::Device device = spec.device ? device_for(*spec.device) : device_;
    at::Tensor storage = spec.values ? given(*spec.values, dtype) : draw(extent, dtype, device);
    // Move the storage, then view it: keeps the exact strides (zero strides included).
    return storage.to(device).as_strided(spec.shape, strides);
  }

  at::Generator generator_;
  c10::Device device_;
};

}  // namespace

c10::OperatorHandle find_operator(const OperatorSpec& op) {
  auto handle = c10::Dispatcher::singleton().findSchema({op.schema_name, op.schema_overload});
  if (!handle) throw std::runtime_error(std::string("operator ") + op.display + " is not registered in this libtorch");
  return *handle;
}

namespace {

// Whether the case spells out the values of a tensor in `value` (index rules leave those alone).
bool gives_values(const Value& value) {
  if (const auto* tensor = value.as<parse::TensorValue>()) return tensor->values.has_value();
  if (const auto* sequence = value.as<parse::SequenceValue>()) {
    return std::any_of(sequence->items.begin(), sequence->items.end(), gives_values);
  }
  return false;
}

uint64_t split_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t draw_seed(uint64_t case_seed, int draw, uint64_t salt) {
  const uint64_t seed = salt == 0 ? case_seed : split_mix(case_seed ^ salt);
  if (draw == 0) return seed;
  return split_mix(seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(draw));
}

std::vector<c10::IValue> materialize(const c10::FunctionSchema& schema, const CaseSpec& spec, c10::Device device,
                                     int draw, uint64_t salt) {
  const parse::Arguments arguments = parse::parse_arguments(spec.arguments, spec.file, spec.line);
  const auto& parameters = schema.arguments();
  if (arguments.positional.size() > parameters.size()) {
    throw std::invalid_argument("the case gives " + std::to_string(arguments.positional.size()) +
                                " positional arguments; the schema takes " + std::to_string(parameters.size()));
  }
  for (const auto& [name, unused] : arguments.keywords) {
    const bool known = std::any_of(parameters.begin(), parameters.end(), [&](const c10::Argument& p) { return p.name() == name; });
    if (!known) throw std::invalid_argument("keyword '" + name + "' is not an argument of " + schema.name());
  }
  Materializer materializer(draw_seed(spec.seed, draw, salt), device);
  std::vector<c10::IValue> stack;
  std::vector<bool> given;  // per schema argument: the case spells out its tensor values
  for (size_t i = 0; i < parameters.size(); ++i) {
    const c10::Argument& parameter = parameters[i];
    const Value* value = i < arguments.positional.size() ? &arguments.positional[i] : nullptr;
    for (const auto& [name, keyword_value] : arguments.keywords) {
      if (name == parameter.name()) {
        if (value != nullptr) throw std::invalid_argument("argument '" + name + "' given by position and by keyword");
        value = &keyword_value;
      }
    }
    given.push_back(value != nullptr && gives_values(*value));
    if (value != nullptr) {
      stack.push_back(materializer.convert(*value, parameter.real_type(), parameter.name()));
    } else if (parameter.default_value()) {
      stack.push_back(*parameter.default_value());
    } else {
      throw std::invalid_argument("argument '" + parameter.name() + "' is missing and has no default");
    }
  }
  apply_index_rules(schema, display_name(schema), stack, materializer.generator(), given);
  return stack;
}

}  // namespace backendbench
