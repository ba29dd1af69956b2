// Canonical printer of trace syntax.
#include "language/printer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace backendbench::parse {
namespace {

std::string join_ints(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(values[i]);
  }
  return text;
}

// Python's repr of a str in single quotes: control characters escaped, so that a printed
// string stays on its line and parses back to the same bytes.
std::string quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') quoted += '\\';
    append_escaped(quoted, c);
  }
  return quoted + "'";
}

std::string print_tuple(const std::vector<Value>& items) {
  std::string text = "(";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += ", ";
    text += print(items[i]);
  }
  if (items.size() == 1) text += ",";
  return text + ")";
}

struct NodePrinter {
  std::string operator()(const BoxedTensor& tensor) const { return (*this)(*tensor); }
  std::string operator()(const TensorValue& tensor) const {
    std::string text = "T([" + join_ints(tensor.shape) + "], " + tensor.dtype;
    if (tensor.stride) text += ", stride=(" + join_ints(*tensor.stride) + (tensor.stride->size() == 1 ? ",)" : ")");
    if (tensor.device) text += ", device=" + quote(*tensor.device);
    if (tensor.values) {
      const DtypeKind kind = dtype_kind(tensor.dtype);
      text += ", values=[";
      for (size_t i = 0; i < tensor.values->size(); ++i) {
        const double value = (*tensor.values)[i];
        if (i > 0) text += ", ";
        if (kind == DtypeKind::kBool) {
          text += value != 0 ? "True" : "False";
        } else if (kind == DtypeKind::kInteger) {
          text += std::to_string(static_cast<int64_t>(value));
        } else {
          text += format_float(value);
        }
      }
      text += "]";
    }
    return text + ")";
  }
  std::string operator()(const SequenceValue& sequence) const {
    if (sequence.kind == SequenceValue::Kind::kTuple) return print_tuple(sequence.items);
    std::string text = "[";
    for (size_t i = 0; i < sequence.items.size(); ++i) {
      if (i > 0) text += ", ";
      text += print(sequence.items[i]);
    }
    return text + "]";
  }
  std::string operator()(const IntValue& number) const { return std::to_string(number.value); }
  std::string operator()(const FloatValue& number) const { return format_float(number.value); }
  std::string operator()(const BoolValue& flag) const { return flag.value ? "True" : "False"; }
  std::string operator()(const NoneValue&) const { return "None"; }
  std::string operator()(const StringValue& text) const { return quote(text.value); }
  std::string operator()(const DtypeValue& dtype) const { return dtype.abbreviation; }
  std::string operator()(const TorchConstantValue& constant) const { return "torch." + constant.name; }
  std::string operator()(const DeviceValue& device) const { return "\"torch.device(" + quote(device.spec) + ")\""; }
};

}  // namespace

std::string format_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // Shortest %.{p}e that reads back exactly, then Python's repr layout of those digits.
  char buffer[64];
  for (int precision = 0; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*e", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string scientific = buffer;
  const bool negative = scientific[0] == '-';
  if (negative) scientific.erase(0, 1);
  const size_t e = scientific.find('e');
  std::string digits = scientific.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  const int point = exponent + 1;  // digits are 0.d1d2... * 10^point
  std::string text;
  if (point <= -4 || point > 16) {
    text = digits.substr(0, 1);
    if (digits.size() > 1) text += "." + digits.substr(1);
    char exponent_text[16];
    std::snprintf(exponent_text, sizeof(exponent_text), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    text += exponent_text;
  } else if (point <= 0) {
    text = "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  } else if (static_cast<size_t>(point) >= digits.size()) {
    text = digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
  } else {
    text = digits.substr(0, point) + "." + digits.substr(point);
  }
  return negative ? "-" + text : text;
}

std::string print(const Value& value) { return std::visit(NodePrinter{}, value.node); }

std::string print(const Arguments& arguments) {
  std::string text = "(" + print_tuple(arguments.positional) + ", {";
  for (size_t i = 0; i < arguments.keywords.size(); ++i) {
    if (i > 0) text += ", ";
    text += quote(arguments.keywords[i].first) + ": " + print(arguments.keywords[i].second);
  }
  return text + "})";
}

std::string print(const TraceFile& trace) {
  std::string text;
  for (const OperatorSection& section : trace.operators) {
    text += "Operator: " + section.name + "\n";
    for (const CaseLine& case_line : section.cases) {
      text += "cnt: " + std::to_string(case_line.count) + ", " + print(case_line.arguments) + "\n";
    }
  }
  return text;
}

}  // namespace backendbench::parse
