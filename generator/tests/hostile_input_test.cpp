// Regression tests for hostile trace and dataset input (issue 12's reproducers and their
// kinds): each gets one located, shortened error or a documented meaning, never a crash.
// Their time and memory are measured by generator/fuzz/parse_bench.cpp, not here.
#include <gtest/gtest.h>

#include <string>

#include "language/parser.h"
#include "language/printer.h"
#include "model/model.h"

namespace backendbench::parse {
namespace {

std::string only_error(const ParseResult& result) {
  EXPECT_EQ(result.errors.size(), 1u);
  return result.errors.empty() ? "" : result.errors[0].str();
}

std::string trace_line(const std::string& arguments) {
  return "Operator: aten.relu.default\ncnt: 1, " + arguments + "\n";
}

std::string error_of_line(const std::string& arguments) { return only_error(parse_trace(trace_line(arguments), "t.txt")); }

// print → parse → print is the identity for what the parser accepts.
void expect_round_trip(const std::string& arguments_text) {
  const std::string printed = print(parse_arguments(arguments_text));
  EXPECT_EQ(print(parse_arguments(printed)), printed) << "from " << arguments_text;
}

TEST(HostileJson, NumberBeyondADoubleIsOneLocatedError) {
  const std::string error = only_error(parse_dataset_json(
      "{\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f32),), {})\", \"runtime_ms\": 1e333}\n", "d.jsonl"));
  EXPECT_EQ(error.rfind("d.jsonl:1:1: error: malformed JSON: number overflow", 0), 0u) << error;
}

TEST(HostileJson, DeepNestingIsOneLocatedError) {
  const std::string error = only_error(parse_dataset_json("{\"a\": " + std::string(100000, '[') + "\n", "d.jsonl"));
  EXPECT_EQ(error, "d.jsonl:1:70: error: JSON nested more than 64 levels deep; expected at most 64 levels");
  const std::string in_array = only_error(
      parse_dataset_json("[\n" + std::string(100000, '[') + std::string(100000, ']') + "]", "d.json"));
  EXPECT_EQ(in_array.rfind("d.json:2:65: error: JSON nested more than 64 levels deep", 0), 0u) << in_array;
}

TEST(HostileJson, CountMustBeANonNegativeInteger) {
  for (const char* count : {"1e300", "-1", "1.5", "1000000000000000000", "true"}) {
    const std::string error = only_error(parse_dataset_json(
        std::string("{\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f32),), {})\", \"count\": ") + count + "}",
        "d.jsonl"));
    EXPECT_EQ(error.rfind(std::string("d.jsonl:1: error: \"count\" is "), 0), 0u) << error;
    EXPECT_NE(error.find("expected a non-negative integer"), std::string::npos) << error;
  }
}

TEST(HostileJson, OperatorNameIsCheckedAsInTraces) {
  const std::string error = only_error(
      parse_dataset_json("{\"op_name\": \"rm -rf /\", \"args\": \"((T([2], f32),), {})\"}", "d.jsonl"));
  EXPECT_EQ(error, "d.jsonl:1: error: malformed \"op_name\" 'rm -rf /'; expected namespace.name.overload, as in aten.add.Tensor");
}

TEST(HostileJson, ArgsOnOneLine) {
  const std::string error = only_error(parse_dataset_json(
      "{\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f32),),\\n {})\"}", "d.jsonl"));
  EXPECT_EQ(error.rfind("d.jsonl:1: error: \"args\" holds a line break", 0), 0u) << error;
}

TEST(HostileJson, ArrayRecordsReportTheirLine) {
  const ParseResult result = parse_dataset_json(
      "[\n  {\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f32),), {})\"},\n\n"
      "  {\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f9),), {})\"}\n]",
      "d.json");
  EXPECT_EQ(only_error(result).rfind("d.json:4: error: in \"args\" at column 10: unknown dtype 'f9'", 0), 0u);
}

TEST(HostileJson, TextAfterTheArrayOrAnEmptyRecordIsAnError) {
  EXPECT_EQ(only_error(parse_dataset_json("[] x", "d.json")),
            "d.json:1:4: error: text after the array of records; expected nothing after the closing ']'");
  const ParseResult empty_record = parse_dataset_json("[1,,2]", "d.json");
  ASSERT_FALSE(empty_record.errors.empty());
  EXPECT_EQ(empty_record.errors[0].str(), "d.json:1:4: error: missing record before ','; expected a record between commas");
}

TEST(HostileTrace, DeepNestingIsOneLocatedError) {
  // 12,500 levels (a 25 KB line) used to overflow the stack.
  const std::string error = error_of_line("((" + std::string(12500, '[') + std::string(12500, ']') + ",), {})");
  EXPECT_EQ(error, "t.txt:2:74: error: lists, tuples and tensors nested more than 64 levels deep; expected at most 64 levels");
}

TEST(HostileTrace, ElementCountOverflowIsRejected) {
  EXPECT_EQ(error_of_line("((T([4611686018427387905, 4], f32, values=[1.0]),), {})"),
            "t.txt:2:11: error: tensor too large: its elements or storage bytes overflow 64 bits; expected a shape "
            "and stride whose storage fits in 2^63 - 1 bytes");
  // 2^62 f32 elements are 2^64 bytes.
  EXPECT_NE(error_of_line("((T([4611686018427387904], f32),), {})").find("tensor too large"), std::string::npos);
  EXPECT_NE(error_of_line("((T([3037000500, 3037000500], f16, stride=(4611686018427387904, 1)),), {})").find("too large"),
            std::string::npos);
  // A zero size does not excuse an overflowing product (PyTorch rejects it too).
  EXPECT_NE(error_of_line("((T([4611686018427387904, 4611686018427387904, 0], f32),), {})").find("too large"),
            std::string::npos);
  // Accepted, with the documented meaning: 2^62 one-byte elements fit the index type (and fail
  // to allocate at run time, as a case failure).
  EXPECT_TRUE(parse_trace(trace_line("((T([4611686018427387904], b8),), {})"), "t.txt").errors.empty());
}

TEST(HostileTrace, InputSizeOfHugeTensorsSaturates) {
  // Each tensor fits; their total, which orders cases for --topn, saturates instead of overflowing.
  const Arguments arguments = parse_arguments(
      "((T([4611686018427387904], b8), T([4611686018427387904], b8), T([0, 4611686018427387904], b8)), {})");
  EXPECT_EQ(model::input_elements(arguments), INT64_MAX);
}

TEST(HostileTrace, NegativeStrideIsRejected) {
  EXPECT_EQ(error_of_line("((T([2, 3], f32, stride=(-3, 1)),), {})"),
            "t.txt:2:34: error: negative stride; expected strides >= 0 (PyTorch has no negative strides)");
}

TEST(HostileTrace, DevicesAreCheckedAndRoundTrip) {
  for (const char* bad : {"torch.device('')", "torch.device('cu da')", "torch.device('cuda:')", "'torch.device(\\'cpu\\')x'",
                          "'torch.device(\"cpu)'", "T([2], f32, None, 'c\"pu')"}) {
    const std::string error = error_of_line(std::string("((") + bad + ",), {})");
    EXPECT_NE(error.find("malformed device"), std::string::npos) << bad << ": " << error;
  }
  for (const char* good : {"((torch.device('cuda:1'),), {})", "((\"torch.device('cpu')\",), {})",
                           "(('torch.device(\"cuda\")',), {})", "((T([2], f32, None, 'cuda'),), {'device': torch.device('cpu')})"}) {
    expect_round_trip(good);
  }
}

TEST(HostileTrace, ControlCharactersInStringsArePrintedEscaped) {
  const Arguments arguments = parse_arguments("(('a\rb\\x00c\\n\\\\d\\'e',), {'k\\te': 1})");
  EXPECT_EQ(arguments.positional[0].as<StringValue>()->value, std::string("a\rb\0c\n\\d'e", 10));
  const std::string printed = print(arguments);
  EXPECT_EQ(printed, "(('a\\rb\\x00c\\n\\\\d\\'e',), {'k\\te': 1})");
  EXPECT_EQ(printed.find_first_of("\r\n"), std::string::npos);
  expect_round_trip(printed);
}

TEST(HostileTrace, PythonEscapesMeanWhatTheyMeanInPython) {
  EXPECT_EQ(parse_arguments("(('\\d\\101\\x41',), {})").positional[0].as<StringValue>()->value, "\\dAA");
  EXPECT_NE(error_of_line("(('\\x4',), {})").find("malformed \\x escape"), std::string::npos);
}

TEST(HostileTrace, DuplicateKeywordAmongManyIsFound) {
  std::string keywords;
  for (int i = 0; i < 200000; ++i) keywords += "'k" + std::to_string(i) + "': 1, ";
  const std::string error = error_of_line("((), {" + keywords + "'k199999': 2})");
  EXPECT_NE(error.find("keyword 'k199999' given twice"), std::string::npos) << error;
}

TEST(HostileTrace, HugeListIsOneErrorAtTheValueLimit) {
  std::string list;
  list.reserve(3 * 1'000'001);
  for (int i = 0; i < 1'000'001; ++i) list += "1, ";
  EXPECT_EQ(error_of_line("(([" + list + "],), {})").rfind("t.txt:2:3000009: error: more than 1000000 values in one line", 0), 0u);
}

TEST(HostileTrace, LongValuesListsAreNotValueLimited) {
  std::string values;
  for (int i = 0; i < 2'000'000; ++i) values += "1.5, ";
  const ParseResult result = parse_trace(trace_line("((T([2000000], f32, values=[" + values + "]),), {})"), "t.txt");
  ASSERT_TRUE(result.errors.empty()) << result.errors[0].str();
  EXPECT_EQ(result.trace.operators[0].cases[0].arguments.positional[0].as<TensorValue>()->values->size(), 2'000'000u);
}

TEST(HostileTrace, OffendingTextIsShortened) {
  const std::string huge_integer(1'000'000, '7');
  const std::string error = error_of_line("((" + huge_integer + ",), {})");
  EXPECT_EQ(error, "t.txt:2:11: error: number literal of 1000000 characters; expected at most 400 characters per number");
  const std::string name = error_of_line("((" + std::string(100000, 'x') + ",), {})");
  EXPECT_LT(name.size(), 300u) << name;
  EXPECT_NE(name.find("... (100000 characters)"), std::string::npos) << name;
  EXPECT_LT(only_error(parse_trace("Operator: " + std::string(100000, '-') + "\n", "t.txt")).size(), 300u);
}

TEST(HostileTrace, LineLengthIsLimited) {
  const std::string error = only_error(parse_trace("# " + std::string(Limits::kLineBytes, ' ') + "x\n", "t.txt"));
  EXPECT_EQ(error, "t.txt:1: error: line of 67108867 bytes; expected at most 67108864 bytes per line");
}

TEST(HostileTrace, EmptyInputIsAWarning) {
  const ParseResult empty = parse_trace("", "t.txt");
  EXPECT_TRUE(empty.errors.empty());
  ASSERT_EQ(empty.warnings.size(), 1u);
  EXPECT_EQ(empty.warnings[0].str(),
            "t.txt: warning: no operators; expected 'Operator: <name>' sections with 'cnt: ' lines, or dataset records");
  const ParseResult no_cases = parse_trace("# only a comment\nOperator: aten.relu.default\n", "t.txt");
  ASSERT_EQ(no_cases.warnings.size(), 1u);
  EXPECT_EQ(no_cases.warnings[0].str(),
            "t.txt:2: warning: operator aten.relu.default has no cases; expected 'cnt: ' lines after it");
  EXPECT_EQ(parse_dataset_json("[]", "d.json").warnings.size(), 1u);
}

TEST(HostileTrace, NumbersRoundTrip) {
  for (const char* text : {"((1e400, -1e400, 1e-400, -0.0, +5, -0, 9223372036854775807, -9223372036854775808),"
                           " {})",
                           "((T([2], i64, values=[9007199254740992, -9007199254740992]), T([], b8, values=[True])), {})",
                           "((T([0, 3], f16, stride=(3, 1), values=[]),), {})", "(((), [], ((),)), {})"}) {
    expect_round_trip(text);
  }
}

}  // namespace
}  // namespace backendbench::parse
