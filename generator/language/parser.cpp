// Recursive-descent parser of trace lines. The grammar is Python-literal syntax restricted
// to what traces contain; every rejection names the column and what would have been valid.
#include "language/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

namespace backendbench::parse {
namespace {

const char* const kDeviceExpected = "a device such as 'cpu', 'cuda' or 'cuda:0'";
const char* const kValueExpected =
    "a value: T(...), a number, a list, a tuple, a string, True, False, None, inf, nan, "
    "a dtype (f16, f32, ...) or torch.<constant>";

class LineParser {
 public:
  LineParser(std::string_view text, const std::string& file, int line, int first_column)
      : text_(text), file_(file), line_(line), first_column_(first_column) {}

  Arguments parse_arguments() {
    skip_spaces();
    expect('(', "'(' opening the (arguments, keywords) pair");
    Value positional = parse_value();
    const auto* tuple = positional.as<SequenceValue>();
    if (tuple == nullptr || tuple->kind != SequenceValue::Kind::kTuple) {
      fail_at(positional.column, "positional arguments are not a tuple", "a tuple such as (T([2], f32),)");
    }
    Arguments arguments;
    arguments.positional = tuple->items;
    skip_spaces();
    expect(',', "',' between the positional tuple and the keyword dict");
    skip_spaces();
    arguments.keywords = parse_keywords();
    skip_spaces();
    if (peek() == ',') advance();
    skip_spaces();
    expect(')', "')' closing the (arguments, keywords) pair");
    skip_spaces();
    if (!at_end()) fail("unexpected text after the arguments", "the end of the line");
    return arguments;
  }

 private:
  // --- cursor -------------------------------------------------------------------------
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance(size_t n = 1) { pos_ += n; }
  int column() const { return first_column_ + static_cast<int>(pos_); }
  void skip_spaces() {
    while (!at_end() && (peek() == ' ' || peek() == '\t')) advance();
  }
  bool consume(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token) return false;
    advance(token.size());
    return true;
  }
  std::string describe_here() const {
    if (at_end()) return "end of line";
    std::string found(1, peek());
    return "'" + found + "'";
  }

  [[noreturn]] void fail_at(int column, std::string problem, std::string expected) const {
    throw DiagnosticError({file_, line_, column, std::move(problem), std::move(expected)});
  }
  [[noreturn]] void fail(std::string problem, std::string expected) const {
    fail_at(column(), std::move(problem), std::move(expected));
  }
  void expect(char c, const char* expected) {
    if (peek() != c) fail("unexpected " + describe_here(), expected);
    advance();
  }

  // --- values -------------------------------------------------------------------------
  Value parse_value() {
    skip_spaces();
    Value value;
    value.column = column();
    const char c = peek();
    if (c == 'T' && peek(1) == '(') {
      const Nested nested(*this);
      value.node = parse_tensor();
    } else if (c == '[' || c == '(') {
      const Nested nested(*this);
      value.node = parse_sequence();
    } else if (c == '\'' || c == '"') {
      value.node = parse_quoted_value();
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
      value.node = parse_number_or_infinity();
    } else if (is_identifier_start(c)) {
      value.node = parse_name();
    } else {
      fail("unexpected " + describe_here(), kValueExpected);
    }
    return value;
  }

  // One level of lists, tuples or T(...) inside another; recursion stops at Limits::kNesting.
  class Nested {
   public:
    explicit Nested(LineParser& parser) : parser_(parser) {
      if (++parser_.depth_ > Limits::kNesting) {
        parser_.fail("lists, tuples and tensors nested more than " + std::to_string(Limits::kNesting) + " levels deep",
                     "at most " + std::to_string(Limits::kNesting) + " levels");
      }
    }
    ~Nested() { --parser_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    LineParser& parser_;
  };

  // Counts a value of a list or tuple against Limits::kValuesPerLine (values=[...] are stored
  // as plain numbers and do not count).
  void count_value() {
    if (++values_ > Limits::kValuesPerLine) {
      fail("more than " + std::to_string(Limits::kValuesPerLine) + " values in one line",
           "at most " + std::to_string(Limits::kValuesPerLine) + " values outside values=[...] lists");
    }
  }

  std::string parse_identifier() {
    const size_t start = pos_;
    while (!at_end() && is_identifier_char(peek())) advance();
    return std::string(text_.substr(start, pos_ - start));
  }

  decltype(Value::node) parse_name() {
    const int start_column = column();
    std::string name = parse_identifier();
    if (name == "True") return BoolValue{true};
    if (name == "False") return BoolValue{false};
    if (name == "None") return NoneValue{};
    if (name == "inf") return FloatValue{std::numeric_limits<double>::infinity()};
    if (name == "nan") return FloatValue{std::numeric_limits<double>::quiet_NaN()};
    if (is_dtype_abbreviation(name)) return DtypeValue{name};
    if (name == "torch" && peek() == '.') {
      advance();
      const int constant_column = column();
      std::string constant = parse_identifier();
      if (constant == "device" && peek() == '(') return parse_device_call();
      if (!is_torch_constant(constant)) {
        fail_at(constant_column, "unknown constant 'torch." + excerpt(constant) + "'",
                "a torch dtype (torch.float16, ...), layout (torch.strided, ...) or memory "
                "format (torch.channels_last, ...)");
      }
      return TorchConstantValue{constant};
    }
    fail_at(start_column, "unknown name '" + excerpt(name) + "'", kValueExpected);
  }

  // torch.device('cpu'), after `torch.device`.
  DeviceValue parse_device_call() {
    expect('(', "'(' after torch.device");
    skip_spaces();
    if (peek() != '\'' && peek() != '"') fail("unexpected " + describe_here(), kDeviceExpected);
    const int spec_column = column();
    std::string spec = parse_string_literal();
    check_device(spec, spec_column);
    skip_spaces();
    expect(')', "')' closing torch.device(...)");
    return DeviceValue{spec};
  }

  void check_device(const std::string& spec, int spec_column) const {
    if (!is_device_spec(spec)) fail_at(spec_column, "malformed device '" + excerpt(spec) + "'", kDeviceExpected);
  }

  // A Python string literal: escapes \\ \' \" \n \r \t \a \b \f \v \xHH and octal \ooo mean
  // what they mean in Python, and any other backslash stays (Python's rule too).
  std::string parse_string_literal() {
    const int open_column = column();
    const char quote = peek();
    advance();
    std::string value;
    while (!at_end() && peek() != quote) {
      if (peek() != '\\') {
        value += peek();
        advance();
        continue;
      }
      const int escape_column = column();
      advance();
      if (at_end()) break;
      const char c = peek();
      advance();
      switch (c) {
        case '\\': case '\'': case '"': value += c; break;
        case 'n': value += '\n'; break;
        case 'r': value += '\r'; break;
        case 't': value += '\t'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case 'x': {
          if (!std::isxdigit(static_cast<unsigned char>(peek())) || !std::isxdigit(static_cast<unsigned char>(peek(1)))) {
            fail_at(escape_column, "malformed \\x escape", "two hexadecimal digits after \\x, as in \\x0a");
          }
          value += static_cast<char>(std::stoi(std::string(text_.substr(pos_, 2)), nullptr, 16));
          advance(2);
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            int code = c - '0';
            for (int digits = 1; digits < 3 && peek() >= '0' && peek() <= '7'; ++digits) {
              code = code * 8 + (peek() - '0');
              advance();
            }
            if (code > 0xff) fail_at(escape_column, "octal escape above \\377", "a byte, \\0 to \\377");
            value += static_cast<char>(code);
          } else {
            value += '\\';
            value += c;
          }
      }
    }
    if (at_end()) fail_at(open_column, "unterminated string", std::string("a closing ") + quote);
    advance();
    return value;
  }

  // Strings; quoted dtype abbreviations ('f16') and quoted devices ("torch.device('cpu')")
  // mean the dtype or device, as in BackendBench's reader.
  decltype(Value::node) parse_quoted_value() {
    const int start_column = column();
    std::string value = parse_string_literal();
    if (is_dtype_abbreviation(value)) return DtypeValue{value};
    const std::string prefix = "torch.device(";
    if (value.rfind(prefix, 0) == 0) {
      // torch.device('<spec>') with either quote: the spec sits between the quotes.
      const size_t open = prefix.size();
      const size_t close = value.size() - 2;  // the quote before the final ')'
      const bool quoted = value.size() >= open + 3 && value.back() == ')' &&
                          (value[open] == '\'' || value[open] == '"') && value[close] == value[open];
      const std::string spec = quoted ? value.substr(open + 1, close - open - 1) : "";
      if (!quoted || !is_device_spec(spec)) fail_at(start_column, "malformed device '" + excerpt(value) + "'", kDeviceExpected);
      return DeviceValue{spec};
    }
    return StringValue{value};
  }

  decltype(Value::node) parse_number_or_infinity() {
    const int start_column = column();
    const size_t start = pos_;
    if (peek() == '-' || peek() == '+') advance();
    if (text_.substr(pos_, 3) == "inf" && !is_identifier_char(peek(3))) {
      const bool negative = text_[start] == '-';
      advance(3);
      const double inf = std::numeric_limits<double>::infinity();
      return FloatValue{negative ? -inf : inf};
    }
    bool is_float = false;
    size_t digits = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) { advance(); ++digits; }
    if (peek() == '.') {
      is_float = true;
      advance();
      while (std::isdigit(static_cast<unsigned char>(peek()))) { advance(); ++digits; }
    }
    if (digits == 0) fail_at(start_column, "malformed number", "digits, as in 3, -1, 0.5 or 1e-05");
    if (peek() == 'e' || peek() == 'E') {
      is_float = true;
      advance();
      if (peek() == '-' || peek() == '+') advance();
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("malformed exponent", "digits after 'e', as in 1e-05");
      while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    }
    if (is_identifier_char(peek())) fail("unexpected " + describe_here() + " in a number", "a separator after the number");
    if (pos_ - start > Limits::kNumberCharacters) {
      fail_at(start_column, "number literal of " + std::to_string(pos_ - start) + " characters",
              "at most " + std::to_string(Limits::kNumberCharacters) + " characters per number");
    }
    const std::string literal(text_.substr(start, pos_ - start));
    errno = 0;
    if (is_float) {
      const double value = std::strtod(literal.c_str(), nullptr);
      return FloatValue{value};
    }
    const long long value = std::strtoll(literal.c_str(), nullptr, 10);
    if (errno == ERANGE) fail_at(start_column, "integer " + excerpt(literal) + " does not fit in 64 bits", "a 64-bit integer");
    return IntValue{value};
  }

  SequenceValue parse_sequence() {
    SequenceValue sequence;
    const int open_column = column();
    const char open = peek();
    const char close = open == '[' ? ']' : ')';
    sequence.kind = open == '[' ? SequenceValue::Kind::kList : SequenceValue::Kind::kTuple;
    advance();
    bool trailing_comma = false;
    skip_spaces();
    while (peek() != close) {
      if (at_end()) fail("unterminated " + std::string(open == '[' ? "list" : "tuple"), std::string("'") + close + "'");
      count_value();
      sequence.items.push_back(parse_value());
      skip_spaces();
      trailing_comma = false;
      if (peek() == ',') {
        advance();
        trailing_comma = true;
        skip_spaces();
      } else if (peek() != close) {
        fail("unexpected " + describe_here(), std::string("',' or '") + close + "'");
      }
    }
    advance();
    sequence.items.shrink_to_fit();
    if (sequence.kind == SequenceValue::Kind::kTuple && sequence.items.size() == 1 && !trailing_comma) {
      fail_at(open_column, "parenthesised value is not a tuple", "a trailing comma for a one-element tuple, as in (x,)");
    }
    return sequence;
  }

  std::vector<int64_t> parse_int_sequence(const char* what) {
    const int start_column = column();
    Value value = parse_value();
    const auto* sequence = value.as<SequenceValue>();
    if (sequence == nullptr) fail_at(start_column, std::string("malformed ") + what, std::string("a ") + what + " list such as [2, 3]");
    std::vector<int64_t> numbers;
    for (const Value& item : sequence->items) {
      const auto* number = item.as<IntValue>();
      if (number == nullptr) fail_at(item.column, std::string("non-integer in ") + what, "an integer");
      if (number->value < 0) {
        if (std::string(what) == "shape") fail_at(item.column, "negative size in tensor shape", "sizes >= 0");
        fail_at(item.column, "negative stride", "strides >= 0 (PyTorch has no negative strides)");
      }
      numbers.push_back(number->value);
    }
    return numbers;
  }

  std::string parse_dtype() {
    skip_spaces();
    const int start_column = column();
    std::string name;
    if (peek() == '\'' || peek() == '"') {
      name = parse_string_literal();
    } else {
      name = parse_identifier();
    }
    if (!is_dtype_abbreviation(name)) {
      std::string all;
      for (const auto& abbreviation : dtype_abbreviations()) all += (all.empty() ? "" : " ") + abbreviation;
      fail_at(start_column, "unknown dtype '" + excerpt(name) + "'", "one of " + all);
    }
    return name;
  }

  std::optional<std::string> parse_device_argument() {
    Value value = parse_value();
    if (value.as<NoneValue>()) return std::nullopt;
    if (const auto* device = value.as<DeviceValue>()) return device->spec;
    if (const auto* text = value.as<StringValue>()) {
      check_device(text->value, value.column);
      return text->value;
    }
    fail_at(value.column, "malformed tensor device", "a device string such as 'cpu' or None");
  }

  std::optional<std::vector<int64_t>> parse_stride_argument() {
    skip_spaces();
    if (consume("None")) return std::nullopt;
    return parse_int_sequence("stride");
  }

  TensorValue parse_tensor() {
    const int tensor_column = column();
    advance(2);  // T(
    TensorValue tensor;
    int stride_column = 0;
    int values_column = 0;
    skip_spaces();
    tensor.shape = parse_int_sequence("shape");
    skip_spaces();
    expect(',', "',' and a dtype after the shape");
    tensor.dtype = parse_dtype();
    int positional_index = 0;  // 0: stride next, 1: device next
    for (;;) {
      skip_spaces();
      if (peek() == ')') break;
      expect(',', "',' or ')' in T(...)");
      skip_spaces();
      if (peek() == ')') break;
      if (consume("stride=")) {
        stride_column = column();
        tensor.stride = parse_stride_argument();
        positional_index = 2;
      } else if (consume("device=")) {
        tensor.device = parse_device_argument();
        positional_index = 2;
      } else if (consume("values=")) {
        values_column = column();
        tensor.values = parse_tensor_values(tensor.dtype);
        positional_index = 2;
      } else if (positional_index == 0) {
        stride_column = column();
        tensor.stride = parse_stride_argument();
        positional_index = 1;
      } else if (positional_index == 1) {
        tensor.device = parse_device_argument();
        positional_index = 2;
      } else {
        fail("unexpected " + describe_here() + " in T(...)", "T([shape], dtype[, stride][, device][, values=[...]])");
      }
    }
    advance();
    if (tensor.stride && tensor.stride->size() != tensor.shape.size()) {
      fail_at(stride_column, "stride has " + std::to_string(tensor.stride->size()) + " entries but the shape has " +
               std::to_string(tensor.shape.size()),
           "one stride per dimension");
    }
    // Element count, storage extent and bytes all fit a signed 64-bit index (c10's).
    const std::optional<int64_t> extent = storage_extent(tensor.shape, tensor.stride);
    int64_t bytes = 0;
    if (!extent || __builtin_mul_overflow(*extent, dtype_size(tensor.dtype), &bytes)) {
      fail_at(tensor_column, "tensor too large: its elements or storage bytes overflow 64 bits",
              "a shape and stride whose storage fits in 2^63 - 1 bytes");
    }
    if (tensor.values && static_cast<int64_t>(tensor.values->size()) != *extent) {
      fail_at(values_column, "values has " + std::to_string(tensor.values->size()) + " elements but the tensor reaches " +
                                 std::to_string(*extent) + " storage elements",
              "one value per storage element, in storage order");
    }
    return tensor;
  }

  // [v, ...] for T(..., values=...): numbers of the tensor's kind (True/False for b8, integers
  // for integer dtypes, numbers, inf, -inf and nan for floating dtypes).
  std::vector<double> parse_tensor_values(const std::string& dtype) {
    const DtypeKind kind = dtype_kind(dtype);
    if (kind == DtypeKind::kComplex) fail("values are not supported for complex tensors", "a real or bool dtype");
    skip_spaces();
    if (peek() != '[') fail("malformed values", "a list such as [1.0, -0.0, nan]");
    advance();
    constexpr int64_t kExactIntegers = int64_t{1} << 53;  // doubles hold integers exactly up to here
    // Read element by element into plain numbers (8 bytes each): a long values list costs
    // about its own size, not a syntax node per element.
    std::vector<double> numbers;
    for (;;) {
      skip_spaces();
      if (peek() == ']') break;
      if (at_end()) fail("unterminated values list", "']'");
      const Value item = parse_value();
      skip_spaces();
      if (peek() == ',') {
        advance();
      } else if (peek() != ']') {
        fail("unexpected " + describe_here(), "',' or ']'");
      }
      const auto* integer = item.as<IntValue>();
      const auto* real = item.as<FloatValue>();
      const auto* flag = item.as<BoolValue>();
      if (kind == DtypeKind::kBool) {
        if (flag == nullptr) fail_at(item.column, "non-boolean value in a " + dtype + " tensor", "True or False");
        numbers.push_back(flag->value ? 1 : 0);
      } else if (kind == DtypeKind::kInteger) {
        if (integer == nullptr) fail_at(item.column, "non-integer value in a " + dtype + " tensor", "an integer");
        if (integer->value > kExactIntegers || integer->value < -kExactIntegers) {
          fail_at(item.column, "integer value out of range", "an integer of magnitude at most 2^53");
        }
        numbers.push_back(static_cast<double>(integer->value));
      } else {
        if (integer == nullptr && real == nullptr) fail_at(item.column, "non-numeric value in a " + dtype + " tensor", "a number, inf, -inf or nan");
        numbers.push_back(integer ? static_cast<double>(integer->value) : real->value);
      }
    }
    advance();
    numbers.shrink_to_fit();
    return numbers;
  }

  std::vector<std::pair<std::string, Value>> parse_keywords() {
    expect('{', "'{' opening the keyword arguments");
    std::vector<std::pair<std::string, Value>> keywords;
    std::unordered_set<std::string> seen;
    skip_spaces();
    while (peek() != '}') {
      if (peek() != '\'' && peek() != '"') fail("unexpected " + describe_here(), "a quoted keyword name or '}'");
      const int key_column = column();
      std::string key = parse_string_literal();
      count_value();
      if (!seen.insert(key).second) fail_at(key_column, "keyword '" + excerpt(key) + "' given twice", "each keyword once");
      skip_spaces();
      expect(':', "':' after the keyword name");
      keywords.emplace_back(std::move(key), parse_value());
      skip_spaces();
      if (peek() == ',') {
        advance();
        skip_spaces();
      } else if (peek() != '}') {
        fail("unexpected " + describe_here(), "',' or '}'");
      }
    }
    advance();
    return keywords;
  }

  std::string_view text_;
  const std::string& file_;
  int line_;
  int first_column_;
  size_t pos_ = 0;
  int depth_ = 0;
  int64_t values_ = 0;
};

}  // namespace

void warn_if_empty(ParseResult& result) {
  auto warn = [&](int line, std::string problem, std::string expected) {
    Diagnostic warning{result.trace.path, line, 0, std::move(problem), std::move(expected)};
    warning.severity = Diagnostic::Severity::kWarning;
    result.warnings.push_back(std::move(warning));
  };
  if (result.trace.operators.empty() && result.errors.empty()) {
    warn(0, "no operators", "'Operator: <name>' sections with 'cnt: ' lines, or dataset records");
  }
  for (const OperatorSection& section : result.trace.operators) {
    if (section.cases.empty()) warn(section.line, "operator " + section.name + " has no cases", "'cnt: ' lines after it");
  }
}

Arguments parse_arguments(std::string_view text, const std::string& file, int line, int first_column) {
  return LineParser(text, file, line, first_column).parse_arguments();
}

ParseResult parse_trace(std::string_view text, const std::string& path) {
  ParseResult result;
  result.trace.path = path;
  OperatorSection* current = nullptr;
  bool in_malformed_section = false;  // its operator line already has a diagnostic
  int line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > Limits::kLineBytes) {
      result.errors.push_back({path, line_number, 0, "line of " + std::to_string(line.size()) + " bytes",
                               "at most " + std::to_string(Limits::kLineBytes) + " bytes per line"});
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank
    if (line[0] == '#') continue;                                           // comment
    const std::string_view operator_prefix = "Operator: ";
    const std::string_view count_prefix = "cnt: ";
    try {
      if (line.substr(0, operator_prefix.size()) == operator_prefix) {
        std::string_view name = line.substr(operator_prefix.size());
        if (!is_operator_name(name)) {
          current = nullptr;
          in_malformed_section = true;
          throw DiagnosticError({path, line_number, static_cast<int>(operator_prefix.size()) + 1,
                                 "malformed operator name '" + excerpt(name) + "'",
                                 "namespace.name.overload, as in aten.add.Tensor"});
        }
        in_malformed_section = false;
        result.trace.operators.push_back({std::string(name), line_number, {}});
        current = &result.trace.operators.back();
      } else if (line.substr(0, count_prefix.size()) == count_prefix) {
        size_t pos = count_prefix.size();
        size_t digits_end = pos;
        while (digits_end < line.size() && std::isdigit(static_cast<unsigned char>(line[digits_end]))) ++digits_end;
        if (digits_end == pos || digits_end - pos > 18) {
          throw DiagnosticError({path, line_number, static_cast<int>(pos) + 1, "malformed count",
                                 "a non-negative integer after 'cnt: '"});
        }
        if (line.substr(digits_end, 2) != ", ") {
          throw DiagnosticError({path, line_number, static_cast<int>(digits_end) + 1,
                                 "malformed count", "', ' after the count"});
        }
        if (in_malformed_section) continue;
        if (current == nullptr) {
          throw DiagnosticError({path, line_number, 1, "case line before any operator line",
                                 "an 'Operator: aten.<name>.<overload>' line first"});
        }
        CaseLine case_line;
        case_line.count = std::stoll(std::string(line.substr(pos, digits_end - pos)));
        case_line.line = line_number;
        const size_t args_start = digits_end + 2;
        case_line.arguments = parse_arguments(line.substr(args_start), path, line_number,
                                              static_cast<int>(args_start) + 1);
        current->cases.push_back(std::move(case_line));
      } else {
        throw DiagnosticError({path, line_number, 1, "unrecognised line",
                               "'Operator: <name>', 'cnt: <N>, <arguments>', a '#' comment or a blank line"});
      }
    } catch (const DiagnosticError& error) {
      result.errors.push_back(error.diagnostic());
    }
  }
  warn_if_empty(result);
  return result;
}

ParseResult parse_trace_file(const std::string& path) {
  std::error_code ignored;
  std::ifstream stream(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(path, ignored) || !stream) {
    ParseResult result;
    result.trace.path = path;
    result.errors.push_back({path, 0, 0, "cannot read the file", "a readable trace file"});
    return result;
  }
  stream.seekg(0, std::ios::end);
  const std::streamoff size = stream.tellg();
  std::string text;
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    stream.seekg(0);
    stream.read(text.data(), size);
  }
  if (size < 0 || !stream) {
    ParseResult result;
    result.trace.path = path;
    result.errors.push_back({path, 0, 0, "cannot read the file", "a readable trace file"});
    return result;
  }
  const bool is_json = path.size() >= 5 && (path.compare(path.size() - 5, 5, ".json") == 0 ||
                                            (path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0));
  return is_json ? parse_dataset_json(text, path) : parse_trace(text, path);
}

}  // namespace backendbench::parse
