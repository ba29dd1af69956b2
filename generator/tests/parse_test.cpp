// Parser and printer: every form of the grammar, canonical printing, one test per diagnostic.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "language/parser.h"
#include "language/printer.h"

namespace backendbench::parse {
namespace {

struct Canonical {
  const char* input;
  const char* printed;
};

class CanonicalForm : public ::testing::TestWithParam<Canonical> {};

TEST_P(CanonicalForm, PrintsCanonicalText) {
  EXPECT_EQ(print(parse_arguments(GetParam().input)), GetParam().printed);
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, CanonicalForm,
    ::testing::Values(
        Canonical{"((T([2, 3], f16),), {})", "((T([2, 3], f16),), {})"},
        Canonical{"((T([2, 3], f16), T([3], f32)), {})", "((T([2, 3], f16), T([3], f32)), {})"},
        Canonical{"((T([10, 20], f16, [40, 2]),), {})", "((T([10, 20], f16, stride=(40, 2)),), {})"},
        Canonical{"((T([2048, 1000], f16, stride=(1, 2048)),), {})", "((T([2048, 1000], f16, stride=(1, 2048)),), {})"},
        Canonical{"((T([4], f32, stride=(1,)),), {})", "((T([4], f32, stride=(1,)),), {})"},
        Canonical{"((T([32, 128, 512], f16, None, 'cpu'),), {})", "((T([32, 128, 512], f16, device='cpu'),), {})"},
        Canonical{"((T([2], f32, device='cuda:0'),), {})", "((T([2], f32, device='cuda:0'),), {})"},
        Canonical{"((T([], f32),), {})", "((T([], f32),), {})"},
        Canonical{"((T([0, 5], f32),), {})", "((T([0, 5], f32),), {})"},
        Canonical{"((T([2,3], 'f16'),), {})", "((T([2, 3], f16),), {})"},
        Canonical{"((nan, inf, -inf), {})", "((nan, inf, -inf), {})"},
        Canonical{"((1e-05, 1E-5, 0.0001, 1e16, 2.5, -1, 0, 1.0), {})",
                  "((1e-05, 1e-05, 0.0001, 1e+16, 2.5, -1, 0, 1.0), {})"},
        Canonical{"((True, False, None), {})", "((True, False, None), {})"},
        Canonical{"(('hello',), {})", "(('hello',), {})"},
        Canonical{"(([],), {})", "(([],), {})"},
        Canonical{"((), {})", "((), {})"},
        Canonical{"(([T([3], i64), None], [-1, -2]), {})", "(([T([3], i64), None], [-1, -2]), {})"},
        Canonical{"((torch.float16, torch.strided, torch.channels_last), {})",
                  "((torch.float16, torch.strided, torch.channels_last), {})"},
        Canonical{"((T([2], f32),), {'device': \"torch.device('cpu')\"})",
                  "((T([2], f32),), {'device': \"torch.device('cpu')\"})"},
        Canonical{"((T([2], f32),), {'device': torch.device('cpu')})",
                  "((T([2], f32),), {'device': \"torch.device('cpu')\"})"},
        Canonical{"((T([5, 5], f32), 42,), {'alpha': 0.5, 'beta': T([3, 3], i64)})",
                  "((T([5, 5], f32), 42), {'alpha': 0.5, 'beta': T([3, 3], i64)})"},
        Canonical{"((T([2], c32), T([2], b8), T([2], u8)), {'dtype': f16, 'layout': torch.sparse_coo})",
                  "((T([2], c32), T([2], b8), T([2], u8)), {'dtype': f16, 'layout': torch.sparse_coo})"},
        Canonical{"  ((1,), {},)  ", "((1,), {})"},
        // values=[...]: this project's extension, printed per the dtype's kind
        Canonical{"((T([3], f32, values=[1, -0.0, nan]),), {})", "((T([3], f32, values=[1.0, -0.0, nan]),), {})"},
        Canonical{"((T([2, 2], f16, stride=(0, 1), values=[inf, -inf]),), {})",
                  "((T([2, 2], f16, stride=(0, 1), values=[inf, -inf]),), {})"},
        Canonical{"((T([2], i64, values=[-3, 9007199254740992]),), {})",
                  "((T([2], i64, values=[-3, 9007199254740992]),), {})"},
        Canonical{"((T([2], b8, values=[True, False]),), {})", "((T([2], b8, values=[True, False]),), {})"},
        Canonical{"((T([], f32, values=[1e-40]),), {})", "((T([], f32, values=[1e-40]),), {})"},
        Canonical{"((T([0, 3], f32, values=[]),), {})", "((T([0, 3], f32, values=[]),), {})"},
        Canonical{"((T([2], f32, device='cpu', values=[0.5, 2]),), {})",
                  "((T([2], f32, device='cpu', values=[0.5, 2.0]),), {})"}));

TEST(Parser, KeepsGivenValuesExactly) {
  const Arguments arguments = parse_arguments("((T([4], f32, values=[-0.0, 1e-45, -inf, nan]),), {})");
  const std::vector<double>& values = *arguments.positional[0].as<TensorValue>()->values;
  ASSERT_EQ(values.size(), 4u);
  EXPECT_TRUE(std::signbit(values[0]) && values[0] == 0.0);
  EXPECT_EQ(values[1], 1e-45);
  EXPECT_EQ(values[2], -INFINITY);
  EXPECT_TRUE(std::isnan(values[3]));
}

TEST(StorageExtent, CountsTheElementsAStridedViewReaches) {
  EXPECT_EQ(storage_extent({2, 3}, std::nullopt), 6);
  EXPECT_EQ(storage_extent({2, 3}, std::vector<int64_t>{1, 2}), 6);
  EXPECT_EQ(storage_extent({2, 3}, std::vector<int64_t>{0, 1}), 3);
  EXPECT_EQ(storage_extent({2, 3}, std::vector<int64_t>{6, 1}), 9);
  EXPECT_EQ(storage_extent({}, std::nullopt), 1);
  EXPECT_EQ(storage_extent({4, 0}, std::nullopt), 0);
}

TEST(Parser, BuildsTheSyntaxTree) {
  const Arguments arguments = parse_arguments("((T([4, 2], f16, stride=(1, 4)), [1, 2]), {'keepdim': True})");
  ASSERT_EQ(arguments.positional.size(), 2u);
  const auto* tensor = arguments.positional[0].as<TensorValue>();
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(tensor->shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(tensor->dtype, "f16");
  EXPECT_EQ(tensor->stride, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(arguments.positional[0].column, 3);
  const auto* list = arguments.positional[1].as<SequenceValue>();
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->kind, SequenceValue::Kind::kList);
  ASSERT_EQ(arguments.keywords.size(), 1u);
  EXPECT_EQ(arguments.keywords[0].first, "keepdim");
  EXPECT_TRUE(arguments.keywords[0].second.as<BoolValue>()->value);
}

TEST(Parser, ReadsSpecialFloats) {
  const Arguments arguments = parse_arguments("((nan, -inf, 1e-07), {})");
  EXPECT_TRUE(std::isnan(arguments.positional[0].as<FloatValue>()->value));
  EXPECT_EQ(arguments.positional[1].as<FloatValue>()->value, -INFINITY);
  EXPECT_EQ(arguments.positional[2].as<FloatValue>()->value, 1e-07);
}

TEST(FormatFloat, MatchesPythonRepr) {
  EXPECT_EQ(format_float(1e-05), "1e-05");
  EXPECT_EQ(format_float(0.1), "0.1");
  EXPECT_EQ(format_float(1.0), "1.0");
  EXPECT_EQ(format_float(-2.5), "-2.5");
  EXPECT_EQ(format_float(1e16), "1e+16");
  EXPECT_EQ(format_float(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(format_float(0.0001), "0.0001");
  EXPECT_EQ(format_float(1.5e-12), "1.5e-12");
  EXPECT_EQ(format_float(0.3333333333333333), "0.3333333333333333");
}

// --- diagnostics: one per kind -----------------------------------------------------------

struct BadLine {
  const char* line;
  const char* diagnostic;
};

class Diagnostics : public ::testing::TestWithParam<BadLine> {};

TEST_P(Diagnostics, NameLocationAndExpectation) {
  const ParseResult result = parse_trace(std::string("Operator: aten.relu.default\n") + GetParam().line + "\n", "t.txt");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].str(), GetParam().diagnostic);
}

INSTANTIATE_TEST_SUITE_P(
    OnePerKind, Diagnostics,
    ::testing::Values(
        BadLine{"cnt: 1, ((T([2], f8),), {})",
                "t.txt:2:18: error: unknown dtype 'f8'; expected one of bf16 f16 f32 f64 c32 c64 c128 i8 i16 i32 i64 b8 u8"},
        BadLine{"cnt: 1, ((foo,), {})",
                "t.txt:2:11: error: unknown name 'foo'; expected a value: T(...), a number, a list, a tuple, a string, "
                "True, False, None, inf, nan, a dtype (f16, f32, ...) or torch.<constant>"},
        BadLine{"cnt: 1, ((torch.floaty,), {})",
                "t.txt:2:17: error: unknown constant 'torch.floaty'; expected a torch dtype (torch.float16, ...), "
                "layout (torch.strided, ...) or memory format (torch.channels_last, ...)"},
        BadLine{"cnt: 1, ((T([2], f32)), {})",
                "t.txt:2:10: error: parenthesised value is not a tuple; expected a trailing comma for a one-element "
                "tuple, as in (x,)"},
        BadLine{"cnt: 1, (([1, 2,), {})", "t.txt:2:17: error: unexpected ')'; expected a value: T(...), a number, a list, a "
                                          "tuple, a string, True, False, None, inf, nan, a dtype (f16, f32, ...) or torch.<constant>"},
        BadLine{"cnt: 1, ((1.2.3,), {})", "t.txt:2:14: error: unexpected '.'; expected ',' or ')'"},
        BadLine{"cnt: 1, ((1e,), {})", "t.txt:2:13: error: malformed exponent; expected digits after 'e', as in 1e-05"},
        BadLine{"cnt: 1, ((T([2, 3], f32, stride=(1,)),), {})",
                "t.txt:2:33: error: stride has 1 entries but the shape has 2; expected one stride per dimension"},
        BadLine{"cnt: 1, ((T([-2], f32),), {})", "t.txt:2:14: error: negative size in tensor shape; expected sizes >= 0"},
        BadLine{"cnt: 1, ((T([2.5], f32),), {})", "t.txt:2:14: error: non-integer in shape; expected an integer"},
        BadLine{"cnt: 1, ((1,), {'a': 1, 'a': 2})", "t.txt:2:25: error: keyword 'a' given twice; expected each keyword once"},
        BadLine{"cnt: 1, ((1,), {}) extra", "t.txt:2:20: error: unexpected text after the arguments; expected the end of the line"},
        BadLine{"cnt: 1, ((1,), {'a' 1})", "t.txt:2:21: error: unexpected '1'; expected ':' after the keyword name"},
        BadLine{"cnt: 1, ((1,), {1: 2})", "t.txt:2:17: error: unexpected '1'; expected a quoted keyword name or '}'"},
        BadLine{"cnt: 1, (('abc,), {})", "t.txt:2:11: error: unterminated string; expected a closing '"},
        BadLine{"cnt: x, ((1,), {})", "t.txt:2:6: error: malformed count; expected a non-negative integer after 'cnt: '"},
        BadLine{"cnt: 1 ((1,), {})", "t.txt:2:7: error: malformed count; expected ', ' after the count"},
        BadLine{"cnt: 1, (1, {})", "t.txt:2:10: error: positional arguments are not a tuple; expected a tuple such as (T([2], f32),)"},
        BadLine{"cnt: 1, ((T([2, 2], f32, values=[1.0, 2.0]),), {})",
                "t.txt:2:33: error: values has 2 elements but the tensor reaches 4 storage elements; expected one value "
                "per storage element, in storage order"},
        BadLine{"cnt: 1, ((T([2], i64, values=[1, 2.5]),), {})",
                "t.txt:2:34: error: non-integer value in a i64 tensor; expected an integer"},
        BadLine{"cnt: 1, ((T([1], b8, values=[1]),), {})",
                "t.txt:2:30: error: non-boolean value in a b8 tensor; expected True or False"},
        BadLine{"cnt: 1, ((T([1], f32, values=['a']),), {})",
                "t.txt:2:31: error: non-numeric value in a f32 tensor; expected a number, inf, -inf or nan"},
        BadLine{"cnt: 1, ((T([1], i64, values=[9007199254740993]),), {})",
                "t.txt:2:31: error: integer value out of range; expected an integer of magnitude at most 2^53"},
        BadLine{"cnt: 1, ((T([1], c64, values=[1.0]),), {})",
                "t.txt:2:30: error: values are not supported for complex tensors; expected a real or bool dtype"},
        BadLine{"cnt: 1, ((T([1], f32, values=(1.0,)),), {})",
                "t.txt:2:30: error: malformed values; expected a list such as [1.0, -0.0, nan]"},
        BadLine{"count: 1", "t.txt:2:1: error: unrecognised line; expected 'Operator: <name>', 'cnt: <N>, <arguments>', a "
                            "'#' comment or a blank line"}));

TEST(TraceFile, CaseBeforeOperatorIsAnError) {
  const ParseResult result = parse_trace("cnt: 1, ((1,), {})\n", "t.txt");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].str(),
            "t.txt:1:1: error: case line before any operator line; expected an 'Operator: aten.<name>.<overload>' line first");
}

TEST(TraceFile, MalformedOperatorNameIsAnErrorAndItsCasesAreNotAttachedElsewhere) {
  const ParseResult result =
      parse_trace("Operator: aten.relu.default\ncnt: 1, ((1,), {})\nOperator: aten..bad\ncnt: 1, ((2,), {})\n", "t.txt");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].str(),
            "t.txt:3:11: error: malformed operator name 'aten..bad'; expected namespace.name.overload, as in aten.add.Tensor");
  ASSERT_EQ(result.trace.operators.size(), 1u);
  EXPECT_EQ(result.trace.operators[0].cases.size(), 1u);
}

TEST(TraceFile, ReportsEveryMalformedLineAndKeepsTheRest) {
  const ParseResult result = parse_trace(
      "# comment\nOperator: aten.add.Tensor\ncnt: 3, ((T([2], f16), T([2], f16)), {})\ncnt: 1, ((T([2], q8),), {})\n"
      "\ncnt: 0, ((T([], f32), 1), {})\ncnt: 2, ((,), {})\n",
      "t.txt");
  EXPECT_EQ(result.errors.size(), 2u);
  EXPECT_EQ(result.errors[0].line, 4);
  EXPECT_EQ(result.errors[1].line, 7);
  ASSERT_EQ(result.trace.operators.size(), 1u);
  const auto& cases = result.trace.operators[0].cases;
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].count, 3);
  EXPECT_EQ(cases[1].count, 0);
  EXPECT_EQ(cases[1].line, 6);
}

TEST(TraceFile, UnreadableFileIsOneDiagnostic) {
  const ParseResult result = parse_trace_file("/nonexistent/trace.txt");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].str(), "/nonexistent/trace.txt: error: cannot read the file; expected a readable trace file");
}

// Every line of every shared TorchBench trace parses and prints back byte for byte.
TEST(TorchBenchTraces, EveryLineRoundTrips) {
  const std::string root = BACKENDBENCH_TORCHBENCH_TRACES;
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << "no TorchBench traces at " << root;
  size_t files = 0, case_lines = 0, parsed_cases = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream stream(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << stream.rdbuf();
    const std::string text = buffer.str();
    const ParseResult result = parse_trace(text, entry.path().string());
    for (const Diagnostic& error : result.errors) ADD_FAILURE() << error.str();
    EXPECT_EQ(print(result.trace), text) << entry.path();
    ++files;
    for (size_t at = text.find("cnt: "); at != std::string::npos; at = text.find("\ncnt: ", at + 1)) ++case_lines;
    for (const auto& section : result.trace.operators) parsed_cases += section.cases.size();
  }
  EXPECT_GT(files, 0u);
  EXPECT_EQ(parsed_cases, case_lines);
  RecordProperty("trace_files", static_cast<int>(files));
  RecordProperty("case_lines", static_cast<int>(case_lines));
}

}  // namespace
}  // namespace backendbench::parse
