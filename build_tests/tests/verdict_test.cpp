// Unit tests of verdict.h: the JSON form of the one results schema.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

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
  verdict.flags = {"suspect"};
  verdict.case_ms = 12;
  const Verdict back = verdict_from_json(verdict_json(verdict));
  EXPECT_EQ(back.case_ms, 12);
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
}

TEST(Verdict, ABadLineIsLocatedInItsFile) {
  const std::string path = ::testing::TempDir() + "/bad.verdicts.jsonl";
  std::ofstream(path) << verdict_json(Verdict()) << "\n"
                      << R"({"schema": "backendbench-verdict", "version": 1, "source": 7})" << "\n";
  try {
    read_verdicts(path);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path + ":2:1: error: ", 0), 0u) << error.what();
    EXPECT_NE(std::string(error.what()).find("expected one backendbench-verdict JSON object per line"),
              std::string::npos);
  }
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
