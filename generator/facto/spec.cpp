// Reads the FACTO suite's spec files; see spec.h and generator/facto/README.md.
#include "facto/spec.h"

#include <map>
#include <set>
#include <sstream>

#include "language/diagnostic.h"

namespace backendbench::facto {
namespace {

const std::vector<std::string> kAbbreviations = {"f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "u8", "b8"};

[[noreturn]] void fail(const std::string& file, int line, int column, const std::string& what, const std::string& expected) {
  throw DiagnosticError(Diagnostic{file, line, column, what, expected});
}

// Splits at the separators outside brackets: "[1,1],2" is "[1,1]" and "2".
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == separator && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

bool is_name(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) return false;
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// A value of a values= list: a number, True/False, or a quoted word ('tanh').
bool is_value(const std::string& text) {
  if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'' &&
      text.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789", 1) == text.size() - 1) {
    return true;
  }
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {  // a list of integers: [1,-1]
    const std::string inside = text.substr(1, text.size() - 2);
    if (inside.empty()) return true;
    for (const std::string& item : split(inside, ',')) {
      if (item == "True" || item == "False") continue;
      if (item.empty() || item.find_first_not_of("-0123456789") != std::string::npos || item == "-") return false;
    }
    return true;
  }
  if (text == "inf" || text == "-inf" || text == "nan" || text == "True" || text == "False" || text == "None") return true;
  size_t used = 0;
  try {
    (void)std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size();
}

// A word of a line and the column it starts at (1-based).
struct Word {
  std::string text;
  int column;
};

std::vector<Word> words_of(const std::string& line, size_t from) {
  std::vector<Word> words;
  size_t at = from;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    if (at >= line.size()) break;
    const size_t end = line.find_first_of(" \t", at);
    const size_t stop = end == std::string::npos ? line.size() : end;
    words.push_back({line.substr(at, stop - at), static_cast<int>(at) + 1});
    at = stop;
  }
  return words;
}

const std::map<std::string, ArgumentKind>& kinds() {
  static const std::map<std::string, ArgumentKind> names = {
      {"tensor", ArgumentKind::kTensor}, {"dim", ArgumentKind::kDim},       {"dims", ArgumentKind::kDims},
      {"bool", ArgumentKind::kBool},     {"values", ArgumentKind::kValues}, {"dtype", ArgumentKind::kDtype},
      {"none", ArgumentKind::kNone},     {"lastsize", ArgumentKind::kLastSize}};
  return names;
}

const std::map<std::string, ShapeRule>& shape_rules() {
  static const std::map<std::string, ShapeRule> names = {{"same", ShapeRule::kSame},
                                                          {"broadcast", ShapeRule::kBroadcast},
                                                          {"matmul", ShapeRule::kMatmul},
                                                          {"bmm", ShapeRule::kBatchMatmul},
                                                          {"into", ShapeRule::kInto},
                                                          {"lastdim", ShapeRule::kLastDim},
                                                          {"channels", ShapeRule::kChannels}};
  return names;
}

// Which attributes each kind takes.
bool takes(ArgumentKind kind, const std::string& key) {
  switch (kind) {
    case ArgumentKind::kTensor:
      return key == "dtypes" || key == "promote" || key == "rank" || key == "empty" || key == "strided" ||
             key == "expanded" || key == "specials" || key == "number" ||
             key == "edges" || key == "base" || shape_rules().count(key) > 0;
    case ArgumentKind::kDim:
    case ArgumentKind::kDims:
    case ArgumentKind::kLastSize:
      return key == "of";
    case ArgumentKind::kValues:
    case ArgumentKind::kDtype:
      return key == "values";
    case ArgumentKind::kBool:
    case ArgumentKind::kNone:
      return false;
  }
  return false;
}

std::string attributes_of(ArgumentKind kind) {
  switch (kind) {
    case ArgumentKind::kTensor:
      return "dtypes=, promote=, number=, rank=, base=AxB..., empty=no, strided=no, expanded=no, specials=no, edges=no, or one of "
             "same=, broadcast=, "
             "into=, matmul=, bmm=, lastdim=, channels= naming an earlier tensor";
    case ArgumentKind::kDim:
    case ArgumentKind::kDims:
    case ArgumentKind::kLastSize:
      return "of=<an earlier tensor argument>";
    case ArgumentKind::kValues:
      return "values=<numbers, True, False or quoted words, comma-separated>";
    case ArgumentKind::kDtype:
      return "values=<dtype abbreviations, comma-separated>";
    default:
      return "no attributes";
  }
}

ArgumentSpec parse_argument(const std::string& file, int line_number, const std::string& line, size_t indent,
                            const OperatorSpec& op) {
  const size_t colon = line.find(':', indent);
  const std::string name = line.substr(indent, colon == std::string::npos ? std::string::npos : colon - indent);
  if (colon == std::string::npos || !is_name(name)) {
    fail(file, line_number, static_cast<int>(indent) + 1, "malformed argument line",
         "'<argument name>: [keyword] <kind> [attribute=value ...]', indented under an Operator: line");
  }
  ArgumentSpec argument;
  argument.name = name;
  argument.where = {file, line_number, static_cast<int>(indent) + 1};
  for (const ArgumentSpec& earlier : op.arguments) {
    if (earlier.name == name) {
      fail(file, line_number, argument.where.column, "argument '" + name + "' is specified twice",
           "one line per argument (first at line " + std::to_string(earlier.where.line) + ")");
    }
  }
  std::vector<Word> words = words_of(line, colon + 1);
  size_t next = 0;
  if (next < words.size() && words[next].text == "keyword") {
    argument.keyword = true;
    ++next;
  }
  if (next >= words.size()) {
    fail(file, line_number, static_cast<int>(colon) + 2, "argument '" + name + "' has no kind",
         "tensor, dim, dims, bool, values, dtype or none");
  }
  // "values=1,2" is short for "values values=1,2".
  if (words[next].text.rfind("values=", 0) == 0) words.insert(words.begin() + static_cast<long>(next), {"values", words[next].column});
  const auto kind = kinds().find(words[next].text);
  if (kind == kinds().end()) {
    fail(file, line_number, words[next].column, "unknown argument kind '" + words[next].text + "'",
         "tensor, dim, dims, bool, values, dtype or none");
  }
  argument.kind = kind->second;
  const auto find_tensor = [&](const std::string& referred, int column) {
    for (const ArgumentSpec& earlier : op.arguments) {
      if (earlier.name == referred && earlier.kind == ArgumentKind::kTensor) return;
    }
    fail(file, line_number, column, "'" + referred + "' is not an earlier tensor argument of " + op.op,
         "the name of a tensor argument specified above this line");
  };
  std::set<std::string> seen;
  for (++next; next < words.size(); ++next) {
    const Word& word = words[next];
    const size_t equals = word.text.find('=');
    const std::string key = word.text.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : word.text.substr(equals + 1);
    if (equals == std::string::npos || value.empty() || !takes(argument.kind, key)) {
      fail(file, line_number, word.column, "'" + word.text + "' is not an attribute of a " + kind->first + " argument",
           attributes_of(argument.kind));
    }
    if (!seen.insert(shape_rules().count(key) ? std::string("shape rule") : key).second) {
      fail(file, line_number, word.column, "'" + key + "' is given twice", "each attribute, and one shape rule, once");
    }
    const int value_column = word.column + static_cast<int>(equals) + 1;
    if (key == "dtypes" || key == "promote" || (key == "values" && argument.kind == ArgumentKind::kDtype)) {
      std::vector<std::string>& into = key == "promote" ? argument.promotions : argument.dtypes;
      for (const std::string& item : split(value, ',')) {
        const std::vector<std::string> group = dtype_group(item);
        if (group.empty()) {
          fail(file, line_number, value_column, "unknown dtype '" + item + "'",
               "abbreviations (f32 f16 bf16 f64 i8 i16 i32 i64 u8 b8) or groups (float, int, bool, all), "
               "comma-separated");
        }
        for (const std::string& dtype : group) {
          bool present = false;
          for (const std::string& existing : into) present = present || existing == dtype;
          if (!present) into.push_back(dtype);
        }
      }
    } else if (key == "rank") {
      const size_t dots = value.find("..");
      try {
        size_t used = 0;
        argument.rank_min = std::stoi(value.substr(0, dots), &used);
        if (used != value.substr(0, dots).size()) throw std::invalid_argument("rank");
        argument.rank_max = argument.rank_min;
        if (dots != std::string::npos) {
          argument.rank_max = std::stoi(value.substr(dots + 2), &used);
          if (used != value.size() - dots - 2) throw std::invalid_argument("rank");
        }
      } catch (const std::exception&) {
        fail(file, line_number, value_column, "malformed rank '" + value + "'", "a rank N or a range A..B");
      }
      if (argument.rank_min < 0 || argument.rank_max > 6 || argument.rank_min > argument.rank_max) {
        fail(file, line_number, value_column, "rank '" + value + "' is out of range", "ranks within 0..6, the smaller first");
      }
    } else if (key == "empty" || key == "strided" || key == "edges" || key == "expanded" || key == "specials") {
      if (value != "no") fail(file, line_number, value_column, "'" + word.text + "' is not a setting", key + "=no");
      (key == "empty"      ? argument.allow_empty
       : key == "strided"  ? argument.allow_strided
       : key == "expanded" ? argument.allow_expanded
       : key == "specials" ? argument.allow_specials
                           : argument.edges) = false;
    } else if (key == "number") {
      if (!is_value(value) || value.front() == '[' || value.front() == '\'') {
        fail(file, line_number, value_column, "'" + value + "' is not a number", "number=<a number, e.g. 2.5>");
      }
      argument.number = value;
    } else if (key == "base") {
      for (const std::string& size : split(value, 'x')) {
        if (size.empty() || size.size() > 6 || size.find_first_not_of("0123456789") != std::string::npos) {
          fail(file, line_number, value_column, "malformed shape '" + value + "'", "sizes joined by x, e.g. base=2x3x8x8");
        }
        argument.base.push_back(std::stoll(size));
      }
      if (argument.base.size() > 6) {
        fail(file, line_number, value_column, "shape '" + value + "' has more than 6 dims", "at most 6 sizes");
      }
      argument.has_base = true;
      argument.rank_min = argument.rank_max = static_cast<int>(argument.base.size());
    } else if (key == "of" || shape_rules().count(key)) {
      find_tensor(value, value_column);
      argument.of = value;
      if (key != "of") argument.shape = shape_rules().at(key);
    } else if (key == "values") {
      for (const std::string& item : split(value, ',')) {
        if (!is_value(item)) {
          fail(file, line_number, value_column, "'" + item + "' is not a value",
               "integers, floats, inf, -inf, nan, True, False, None, quoted words ('tanh') or integer lists ([1,0]), "
               "comma-separated");
        }
        // A list in the trace language's own spelling: [1, -1].
        argument.values.push_back(item.front() == '[' ? "[" + [&] {
          std::string joined;
          for (const std::string& part : split(item.substr(1, item.size() - 2), ',')) joined += (joined.empty() ? "" : ", ") + part;
          return joined;
        }() + "]"
                                                      : item);
      }
    }
  }
  if ((argument.kind == ArgumentKind::kDim || argument.kind == ArgumentKind::kDims ||
       argument.kind == ArgumentKind::kLastSize) &&
      argument.of.empty()) {
    fail(file, line_number, argument.where.column, "dim argument '" + name + "' names no tensor",
         "of=<an earlier tensor argument>");
  }
  if ((argument.kind == ArgumentKind::kValues && argument.values.empty()) ||
      (argument.kind == ArgumentKind::kDtype && argument.dtypes.empty())) {
    fail(file, line_number, argument.where.column, "argument '" + name + "' lists no values", attributes_of(argument.kind));
  }
  if (argument.kind == ArgumentKind::kTensor) {
    if (argument.shape == ShapeRule::kFree && argument.dtypes.empty()) {
      fail(file, line_number, argument.where.column, "tensor '" + name + "' lists no dtypes",
           "dtypes=<abbreviations or groups> on a tensor whose shape follows no other");
    }
    if ((!argument.promotions.empty() || !argument.number.empty()) && argument.shape == ShapeRule::kFree) {
      fail(file, line_number, argument.where.column,
           (argument.number.empty() ? "promote=" : "number=") + std::string(" on tensor '") + name +
               "', whose shape follows no other",
           "promote= or number= on a tensor with same=, broadcast=, into=, matmul=, bmm=, lastdim= or channels=");
    }
  }
  return argument;
}

}  // namespace

std::vector<std::string> dtype_group(const std::string& name) {
  if (name == "float") return {"f32", "f16", "bf16", "f64"};
  if (name == "int") return {"i64", "i32", "i16", "i8", "u8"};
  if (name == "bool") return {"b8"};
  if (name == "all") return {"f32", "f16", "bf16", "f64", "i64", "i32", "i16", "i8", "u8", "b8"};
  for (const std::string& abbreviation : kAbbreviations) {
    if (abbreviation == name) return {name};
  }
  return {};
}

std::vector<OperatorSpec> parse_specs(const std::string& file, const std::string& text) {
  std::vector<OperatorSpec> specs;
  std::set<std::string> operators;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t indent = line.find_first_not_of(" \t");
    if (indent == std::string::npos || line[indent] == '#') continue;
    if (indent == 0) {
      const std::string prefix = "Operator:";
      if (line.compare(0, prefix.size(), prefix) != 0) {
        fail(file, line_number, 1, "expected an 'Operator:' line", "'Operator: aten.<name>.<overload>', then its arguments indented");
      }
      const std::vector<Word> words = words_of(line, prefix.size());
      const std::vector<std::string> parts = words.size() == 1 ? split(words[0].text, '.') : std::vector<std::string>{};
      if (parts.size() != 3 || parts[0] != "aten" || !is_name(parts[1]) || !is_name(parts[2])) {
        fail(file, line_number, words.empty() ? static_cast<int>(prefix.size()) + 1 : words[0].column,
             "malformed operator name", "aten.<name>.<overload>, e.g. aten.add.Tensor or aten.relu.default");
      }
      if (!operators.insert(words[0].text).second) {
        fail(file, line_number, words[0].column, words[0].text + " is specified twice", "one entry per operator overload");
      }
      specs.push_back({words[0].text, {}, {file, line_number, words[0].column}});
      continue;
    }
    if (specs.empty()) {
      fail(file, line_number, static_cast<int>(indent) + 1, "argument line before any operator",
           "an 'Operator: aten.<name>.<overload>' line first");
    }
    specs.back().arguments.push_back(parse_argument(file, line_number, line, indent, specs.back()));
  }
  for (const OperatorSpec& spec : specs) {
    bool has_tensor = false;
    for (const ArgumentSpec& argument : spec.arguments) {
      has_tensor = has_tensor || (argument.kind == ArgumentKind::kTensor && argument.shape == ShapeRule::kFree);
    }
    if (!has_tensor) {
      fail(file, spec.where.line, spec.where.column, spec.op + " has no tensor argument of its own shape",
           "a first tensor argument with dtypes= (its edge shapes drive the cases)");
    }
  }
  return specs;
}

}  // namespace backendbench::facto
