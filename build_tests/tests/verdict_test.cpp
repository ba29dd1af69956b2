// Unit tests of verdict.h: the JSON form of the one results schema.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <fstream>

#include "backendbench/json_numbers.h"
#include "backendbench/verdict.h"

namespace backendbench {
namespace {

TEST(Verdict, JsonCarriesTheSchemaAndEveryField) {
  Verdict verdict;
  verdict.suite = "smoke";
  verdict.op = "relu.default";
  verdict.case_name = "f32_4_abc";
  verdict.arguments = "((T([4], f32),), {})";
  verdict.trace_file = "traces/smoke.txt";
  verdict.trace_line = 3;
  verdict.backend = "impl1";
  verdict.status = Verdict::Status::kFailed;
  verdict.failed_draw = 2;
  verdict.salt = 0xabc;
  verdict.checks = {{"outputs", false, "1 of 4 values differ"}};
  verdict.errors = {"relu.default case ...: 1 of 4 values differ \xff"};  // invalid UTF-8 is replaced, not thrown
  verdict.flags = {"suspect"};
  const nlohmann::json json = nlohmann::json::parse(verdict_json(verdict));
  EXPECT_EQ(json["schema"], "backendbench-verdict");
  EXPECT_EQ(json["version"], kVerdictSchemaVersion);
  EXPECT_EQ(json["operator"], "relu.default");
  EXPECT_EQ(json["source"]["line"], 3);
  EXPECT_EQ(json["status"], "failed");
  EXPECT_EQ(json["failed_draw"], 2);
  EXPECT_EQ(json["salt"], "0x0000000000000abc");
  EXPECT_EQ(json["checks"][0]["check"], "outputs");
  EXPECT_EQ(json["flags"][0], "suspect");
  EXPECT_TRUE(json["timing"].is_null());
  EXPECT_FALSE(json.contains("case_ms"));  // a verdict no process ran (the planner's) says no time
  verdict.case_ms = 37;
  EXPECT_EQ(nlohmann::json::parse(verdict_json(verdict))["case_ms"], 37);
}

TEST(Verdict, JsonReadsBackAsTheSameVerdict) {
  Verdict verdict;
  verdict.op = "relu.default";
  verdict.backend = "impl2";
  verdict.status = Verdict::Status::kFailed;
  verdict.salt = 0xfeedface12345678;
  verdict.errors = {"wrong"};
  verdict.checks = {{"outputs", false, "wrong"}};
  verdict.timing = TimingFigures{10, 5, 5, 2};
  verdict.timing->speedup_low = 1.5;
  verdict.timing->speedup_high = 2.5;
  verdict.timing->other_load = 0.125;
  verdict.timing->cpu_waited = 0.0625;
  verdict.timing->back_to_back_speedup = 1.125;
  verdict.flags = {"suspect"};
  verdict.case_ms = 12;
  verdict.aten_share = 0.25;
  const Verdict back = verdict_from_json(verdict_json(verdict));
  EXPECT_EQ(back.case_ms, 12);
  EXPECT_DOUBLE_EQ(back.aten_share, 0.25);
  ASSERT_TRUE(back.timing);
  EXPECT_DOUBLE_EQ(back.timing->speedup_low, 1.5);
  EXPECT_DOUBLE_EQ(back.timing->speedup_high, 2.5);
  EXPECT_DOUBLE_EQ(back.timing->other_load, 0.125);
  EXPECT_DOUBLE_EQ(back.timing->cpu_waited, 0.0625);
  EXPECT_DOUBLE_EQ(back.timing->back_to_back_speedup, 1.125);
  EXPECT_EQ(verdict_json(back), verdict_json(verdict));
  EXPECT_THROW(verdict_from_json("{\"schema\": \"other\"}"), std::invalid_argument);
  EXPECT_THROW(verdict_from_json("not json"), std::invalid_argument);
}

TEST(Verdict, ALineWithOnlySomeFieldsReadsWithDefaults) {
  const Verdict sparse = verdict_from_json(
      R"({"schema": "backendbench-verdict", "version": 1, "operator": "relu.default", "backend": "impl1",)"
      R"( "status": "failed", "errors": ["output 0 differs"]})");
  EXPECT_EQ(sparse.op, "relu.default");
  EXPECT_EQ(sparse.status, Verdict::Status::kFailed);
  EXPECT_TRUE(sparse.checks.empty());
  EXPECT_EQ(sparse.trace_line, 0);
  EXPECT_EQ(sparse.case_ms, -1);
  EXPECT_LT(sparse.aten_share, 0);  // not measured
}

TEST(Verdict, ALineNamingNoCaseIsLocatedInItsFileAndTheOthersAreRead) {
  const std::string path = ::testing::TempDir() + "/bad.verdicts.jsonl";
  Verdict good;
  good.op = "relu.default";
  std::ofstream(path) << verdict_json(good) << "\n"
                      << R"({"schema": "backendbench-verdict", "version": 1, "source": 7})" << "\n"
                      << "not json at all\n"
                      << verdict_json(good) << "\n";
  const VerdictFile file = read_verdicts(path);
  ASSERT_EQ(file.verdicts.size(), 2u);
  ASSERT_EQ(file.unreadable.size(), 2u);
  EXPECT_EQ(file.unreadable[0].rfind(path + ":2:1: error: ", 0), 0u) << file.unreadable[0];
  EXPECT_NE(file.unreadable[0].find("expected one backendbench-verdict JSON object per line"), std::string::npos);
  EXPECT_EQ(file.unreadable[1].rfind(path + ":3:1: error: ", 0), 0u) << file.unreadable[1];
  EXPECT_TRUE(read_verdicts(::testing::TempDir() + "/no_such.verdicts.jsonl").verdicts.empty());
}

TEST(Verdict, ABadLineNamingItsCaseFailsThatCaseWithTheLocatedError) {
  const std::string path = ::testing::TempDir() + "/stand_in.verdicts.jsonl";
  // What the writer emitted before non-finite figures had a form: null where a number belongs.
  Verdict passed;
  passed.suite = "edge";
  passed.op = "relu.default";
  passed.backend = "impl2";
  passed.case_name = "bf16_8_abc";
  passed.frontend = "tests";
  nlohmann::json line = nlohmann::json::parse(verdict_json(passed));
  line["errors"] = 7;  // a field of the wrong type
  std::ofstream(path) << line.dump() << "\n";
  const VerdictFile file = read_verdicts(path);
  EXPECT_TRUE(file.unreadable.empty());
  ASSERT_EQ(file.verdicts.size(), 1u);
  const Verdict& stand_in = file.verdicts[0];
  EXPECT_EQ(stand_in.status, Verdict::Status::kFailed);  // the line said passed: it is not believed
  EXPECT_EQ(stand_in.suite, "edge");
  EXPECT_EQ(stand_in.op, "relu.default");
  EXPECT_EQ(stand_in.backend, "impl2");
  EXPECT_EQ(stand_in.case_name, "bf16_8_abc");
  EXPECT_EQ(stand_in.frontend, "tests");
  ASSERT_EQ(stand_in.errors.size(), 1u);
  EXPECT_EQ(stand_in.errors[0].rfind("unreadable verdict: " + path + ":1:1: error: ", 0), 0u) << stand_in.errors[0];
}

// Every figure a verdict holds, in each non-finite value, is written as valid JSON and read back
// as what it was (JSON has no infinity or NaN: json_numbers.h).
TEST(Verdict, NonFiniteFiguresInEveryFieldReadBackAsWhatTheyWere) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  using Field = double*;
  for (const double value : {inf, -inf, nan}) {
    Verdict verdict;
    verdict.op = "relu.default";
    verdict.timing = TimingFigures{};
    TimingFigures& t = *verdict.timing;
    const std::vector<std::pair<std::string, Field>> fields = {
        {"max_abs_error", &verdict.max_abs_error}, {"max_rel_error", &verdict.max_rel_error},
        {"timing.reference_us", &t.reference_us},  {"timing.kernel_us", &t.kernel_us},
        {"timing.kernel_mean_us", &t.kernel_mean_us}, {"timing.speedup", &t.speedup},
        {"timing.iqr_pct", &t.iqr_pct},            {"timing.reference_iqr_pct", &t.reference_iqr_pct},
        {"timing.bytes", &t.bytes},                {"timing.flops", &t.flops},
        {"timing.GBps", &t.gbps},                  {"timing.TFLOPps", &t.tflops},
        {"timing.pct_peak_bw", &t.pct_peak_bw},    {"timing.pct_peak_flops", &t.pct_peak_flops},
        {"timing.launch_overhead_us", &t.launch_overhead_us}, {"timing.hidden_work_us", &t.hidden_work_us}};
    for (size_t i = 0; i < fields.size(); ++i) {
      for (const auto& [name, field] : fields) *field = 1.5;
      *fields[i].second = value;
      const std::string text = verdict_json(verdict);
      const nlohmann::json json = nlohmann::json::parse(text);  // strict JSON
      const nlohmann::json& written = fields[i].first.rfind("timing.", 0) == 0 ? json["timing"][fields[i].first.substr(7)]
                                                                               : json[fields[i].first];
      EXPECT_EQ(written, std::isnan(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity") << fields[i].first;
      Verdict back = verdict_from_json(text);
      TimingFigures& b = *back.timing;
      const std::vector<double> read = {back.max_abs_error, back.max_rel_error, b.reference_us, b.kernel_us,
                                        b.kernel_mean_us, b.speedup, b.iqr_pct, b.reference_iqr_pct, b.bytes, b.flops,
                                        b.gbps, b.tflops, b.pct_peak_bw, b.pct_peak_flops, b.launch_overhead_us,
                                        b.hidden_work_us};
      for (size_t j = 0; j < read.size(); ++j) {
        if (j != i) {
          EXPECT_EQ(read[j], 1.5) << fields[j].first;
        } else if (std::isnan(value)) {
          EXPECT_TRUE(std::isnan(read[j])) << fields[j].first;
        } else {
          EXPECT_EQ(read[j], value) << fields[j].first;
        }
      }
    }
  }
}

TEST(JsonNumbers, AFigureIsANumberOneOfThreeNamesOrNullForOldFiles) {
  EXPECT_EQ(json_number(2.5), 2.5);
  EXPECT_EQ(json_number(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_TRUE(number_or_null(std::nan("")).is_null());
  EXPECT_EQ(number_or_null(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_TRUE(std::isnan(number_from_json(nlohmann::json())));  // what older runs wrote for inf or NaN
  EXPECT_EQ(number_from_json("-Infinity"), -std::numeric_limits<double>::infinity());
  try {
    number_field(nlohmann::json{{"speedup", "fast"}}, "speedup", 0.0);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()),
              "\"speedup\": \"fast\" is not a figure; expected a number, \"Infinity\", \"-Infinity\" or \"NaN\"");
  }
  EXPECT_EQ(number_field(nlohmann::json::object(), "speedup", 3.0), 3.0);
}

TEST(Verdict, AppendingWritesOneLinePerVerdict) {
  const std::string path = ::testing::TempDir() + "/verdicts.jsonl";
  std::remove(path.c_str());
  Verdict verdict;
  verdict.op = "a";
  append_verdict(path, verdict);
  verdict.op = "b";
  append_verdict(path, verdict);
  std::ifstream in(path);
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_FALSE(std::getline(in, third));
  EXPECT_EQ(nlohmann::json::parse(first)["operator"], "a");
  EXPECT_EQ(nlohmann::json::parse(second)["operator"], "b");
}

}  // namespace
}  // namespace backendbench
