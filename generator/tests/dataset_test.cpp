// The dataset's JSON form: arrays and JSON Lines, its fields, and one diagnostic per bad record.
#include <gtest/gtest.h>

#include "language/parser.h"
#include "language/printer.h"

namespace backendbench::parse {
namespace {

TEST(Dataset, ReadsAnArrayOfRecords) {
  const ParseResult result = parse_dataset_json(
      R"json([{"op_name": "aten.relu.default", "args": "((T([2], f16),), {})", "count": 3, "in_models": ["a", "b"],
           "is_overhead_dominated_op": true, "runtime_ms": 0.5, "relative_runtime_to_kernel_launch": null, "uuid": "u1"},
          {"op_name": "aten.add.Tensor", "args": "((T([2], f16), 1.0), {})", "included_in_benchmark": false,
           "why_excluded": ["Failed to run: x"]},
          {"op_name": "aten.relu.default", "args": "((T([], f32),), {})", "count": 0}])json",
      "d.json");
  ASSERT_TRUE(result.errors.empty()) << result.errors[0].str();
  ASSERT_EQ(result.trace.operators.size(), 2u);
  const OperatorSection& relu = result.trace.operators[0];
  EXPECT_EQ(relu.name, "aten.relu.default");
  ASSERT_EQ(relu.cases.size(), 2u);
  EXPECT_EQ(relu.cases[0].count, 3);
  EXPECT_EQ(relu.cases[0].line, 1);
  EXPECT_EQ(print(relu.cases[0].arguments), "((T([2], f16),), {})");
  const DatasetFields& fields = *relu.cases[0].dataset;
  EXPECT_EQ(fields.uuid, "u1");
  EXPECT_TRUE(fields.is_overhead_dominated_op);
  EXPECT_EQ(fields.runtime_ms, 0.5);
  EXPECT_FALSE(fields.relative_runtime_to_kernel_launch.has_value());
  EXPECT_EQ(fields.in_models, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(relu.cases[1].dataset->is_synthetic);  // count 0 without an explicit flag
  const DatasetFields& add = *result.trace.operators[1].cases[0].dataset;
  EXPECT_FALSE(add.included_in_benchmark);
  EXPECT_EQ(add.why_excluded, (std::vector<std::string>{"Failed to run: x"}));
  EXPECT_EQ(result.trace.operators[1].cases[0].count, 1);  // default
}

TEST(Dataset, ReadsJsonLinesWithLineNumbers) {
  const ParseResult result = parse_dataset_json(
      "{\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f16),), {})\", \"in_models\": \"m1, m2\"}\n\n"
      "{\"op_name\": \"aten.relu.default\", \"args\": \"((T([3], f16),), {})\"}\n",
      "d.jsonl");
  ASSERT_TRUE(result.errors.empty());
  ASSERT_EQ(result.trace.operators[0].cases.size(), 2u);
  EXPECT_EQ(result.trace.operators[0].cases[1].line, 3);
  EXPECT_EQ(result.trace.operators[0].cases[0].dataset->in_models, (std::vector<std::string>{"m1", "m2"}));
}

TEST(Dataset, OneDiagnosticPerBadRecord) {
  const ParseResult result = parse_dataset_json(
      "{\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f8),), {})\"}\n"
      "{\"op_name\": \"aten.relu.default\"}\n"
      "{\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f16),), {})\", \"count\": \"many\"}\n"
      "not json\n"
      "{\"op_name\": \"aten.relu.default\", \"args\": \"((T([2], f16),), {})\"}\n",
      "d.jsonl");
  ASSERT_EQ(result.errors.size(), 4u);
  EXPECT_EQ(result.errors[0].str(),
            "d.jsonl:1: error: in \"args\" at column 10: unknown dtype 'f8'; expected one of bf16 f16 f32 f64 c32 c64 "
            "c128 i8 i16 i32 i64 b8 u8");
  EXPECT_EQ(result.errors[1].str().rfind("d.jsonl:2: error: record lacks \"op_name\" or \"args\" as strings; expected a record", 0), 0u);
  EXPECT_EQ(result.errors[2].str(), "d.jsonl:3: error: \"count\" is \"many\"; expected a non-negative integer of at most 18 "
                                    "digits, as in \"count\": 3");
  EXPECT_EQ(result.errors[3].line, 4);
  EXPECT_EQ(result.trace.operators[0].cases.size(), 1u);  // the good record is kept
}

TEST(Dataset, MalformedArrayIsOneDiagnostic) {
  const ParseResult result = parse_dataset_json("[{\"op_name\": ", "d.json");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].str(), "d.json:1:14: error: unterminated JSON array; expected ']' closing the array of records");
}

TEST(Dataset, TheShippedSampleParses) {
  const ParseResult result = parse_trace_file(BACKENDBENCH_SAMPLE_DATASET);
  EXPECT_TRUE(result.errors.empty());
  size_t records = 0;
  for (const auto& section : result.trace.operators) records += section.cases.size();
  EXPECT_EQ(records, 5u);
}

}  // namespace
}  // namespace backendbench::parse
