// Unit tests of language/job.h: the JSON form of a job, one test per diagnostic.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "language/job.h"

namespace backendbench {
namespace {

Job relu_job() {
  Job job;
  job.suite = "smoke";
  job.op = "relu.default";
  job.backend = "impl1";
  return job;
}

// The message of the JobError `text` raises.
std::string error_of(const std::string& text) {
  try {
    parse_jobs(text, "jobs.jsonl");
  } catch (const JobError& error) {
    return error.what();
  }
  return "(no error)";
}

const std::string kHead = R"({"schema": "backendbench-job", "version": 1, "suite": "smoke", "operator": "relu.default", "backend": "impl1")";

TEST(Job, RoundTripsThroughJson) {
  Job job = relu_job();
  job.mode = Job::Mode::kTime;
  job.cases = {"f32_4_abc", "f16_8_def"};
  job.salt = 0xabc;
  job.draws = 3;
  job.case_timeout_seconds = 7;
  job.device = "cuda:1";
  job.part = 2;
  job.parts = 3;
  const std::vector<Job> parsed = parse_jobs(job_json(job) + "\n\n" + job_json(relu_job()) + "\n", "x");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].suite, "smoke");
  EXPECT_EQ(parsed[0].op, "relu.default");
  EXPECT_EQ(parsed[0].backend, "impl1");
  EXPECT_EQ(parsed[0].mode, Job::Mode::kTime);
  EXPECT_EQ(parsed[0].cases, job.cases);
  EXPECT_EQ(parsed[0].salt, job.salt);
  EXPECT_EQ(parsed[0].draws, job.draws);
  EXPECT_EQ(parsed[0].case_timeout_seconds, job.case_timeout_seconds);
  EXPECT_EQ(parsed[0].device, job.device);
  EXPECT_EQ(parsed[0].part, 2);
  EXPECT_EQ(parsed[0].parts, 3);
  EXPECT_EQ(parsed[1].parts, 0);
  EXPECT_EQ(parsed[1].mode, Job::Mode::kCheck);
  EXPECT_TRUE(parsed[1].cases.empty());
  EXPECT_FALSE(parsed[1].salt);
  EXPECT_EQ(job_json(parsed[0]), job_json(job));
}

TEST(Job, OnlyKeepsOneCaseAndTheRest) {
  Job job = relu_job();
  job.cases = {"a", "b"};
  job.draws = 4;
  const Job one = job.only("b");
  EXPECT_EQ(one.cases, std::vector<std::string>{"b"});
  EXPECT_EQ(one.draws, 4);
  EXPECT_EQ(one.name(), "smoke/relu.default/impl1");
}

TEST(Job, PartsSpreadTheCasesEvenly) {
  Job job = relu_job();
  job.part = 2;
  job.parts = 3;
  EXPECT_EQ(job.name(), "smoke/relu.default/impl1/part2of3");
  std::vector<size_t> positions;
  for (size_t position = 0; position < 8; ++position) {
    if (job.in_part(position)) positions.push_back(position);
  }
  EXPECT_EQ(positions, (std::vector<size_t>{1, 4, 7}));
  // A named case is whole: only() drops the part, whose positions would select another case.
  EXPECT_EQ(job.only("x").parts, 0);
  EXPECT_TRUE(job.only("x").in_part(0));
}

TEST(Job, PartsOfACaseCount) {
  EXPECT_EQ(job_parts(1898, 200), 10);
  EXPECT_EQ(job_parts(200, 200), 1);
  EXPECT_EQ(job_parts(201, 200), 2);
  EXPECT_EQ(job_parts(0, 200), 1);
  EXPECT_EQ(job_parts(5000, 0), 1);
}

TEST(Job, ServedEntryAddressesNameTheExecutableGpuAndSlot) {
  EXPECT_EQ(served_entry_address("backendbench-7-ab", "/b/backendbench_test_smoke", "1", 3),
            "backendbench-7-ab/backendbench_test_smoke/1/3");
  EXPECT_EQ(served_entry_address("p", "backendbench_test_edge", "cpu", 0), "p/backendbench_test_edge/cpu/0");
  // Each executable, GPU and slot its own server.
  EXPECT_NE(served_entry_address("p", "/b/x", "0", 1), served_entry_address("p", "/b/x", "1", 0));
  EXPECT_NE(served_entry_address("p", "/b/x", "0", 1), served_entry_address("p", "/b/y", "0", 1));
}

TEST(JobDiagnostics, NotJson) {
  EXPECT_EQ(error_of("\n{\"schema\": }"),
            "jobs.jsonl:2:12: error: not JSON; expected one backendbench-job JSON object per line (docs/schemas.md, Jobs)");
}

TEST(JobDiagnostics, NotAnObject) {
  EXPECT_EQ(error_of("[1]"), "jobs.jsonl:1:1: error: not a JSON object; expected one backendbench-job JSON object "
                             "per line (docs/schemas.md, Jobs)");
}

TEST(JobDiagnostics, UnknownField) {
  EXPECT_EQ(error_of(kHead + R"(, "draw": 2})"),
            "jobs.jsonl:1:112: error: unknown field \"draw\"; expected only schema, version, suite, operator, backend, "
            "mode, cases, salt, draws, case_timeout, device, part and parts");
}

TEST(JobDiagnostics, WrongSchema) {
  EXPECT_EQ(error_of(R"({"schema": "backendbench-verdict", "version": 1})"),
            "jobs.jsonl:1:2: error: not a backendbench-job; expected \"schema\": \"backendbench-job\"");
}

TEST(JobDiagnostics, WrongVersion) {
  EXPECT_EQ(error_of(R"({"schema": "backendbench-job", "version": 2})"),
            "jobs.jsonl:1:32: error: unsupported version; expected \"version\": 1");
}

TEST(JobDiagnostics, MissingOperator) {
  EXPECT_EQ(error_of(R"({"schema": "backendbench-job", "version": 1, "suite": "smoke", "backend": "aten"})"),
            "jobs.jsonl:1:1: error: missing or empty \"operator\"; expected \"operator\" as a non-empty string");
}

TEST(JobDiagnostics, BadMode) {
  EXPECT_EQ(error_of(kHead + R"(, "mode": "bench"})"),
            "jobs.jsonl:1:112: error: bad mode; expected \"check\" or \"time\"");
}

TEST(JobDiagnostics, CasesNotAList) {
  EXPECT_EQ(error_of(kHead + R"(, "cases": "f32"})"),
            "jobs.jsonl:1:112: error: \"cases\" is not a list; expected a list of case names");
}

TEST(JobDiagnostics, EmptyCaseName) {
  EXPECT_EQ(error_of(kHead + R"(, "cases": [""]})"),
            "jobs.jsonl:1:112: error: a case name that is not a non-empty string; expected a list of case names");
}

TEST(JobDiagnostics, BadSalt) {
  EXPECT_EQ(error_of(kHead + R"(, "salt": 12})"),
            "jobs.jsonl:1:112: error: bad salt; expected a string such as \"0x0123456789abcdef\"");
}

TEST(JobDiagnostics, BadDraws) {
  EXPECT_EQ(error_of(kHead + R"(, "draws": 0})"), "jobs.jsonl:1:112: error: bad draws; expected an integer of at least 1");
}

TEST(JobDiagnostics, BadCaseTimeout) {
  EXPECT_EQ(error_of(kHead + R"(, "case_timeout": -1})"),
            "jobs.jsonl:1:112: error: bad case_timeout; expected a whole number of seconds, 0 for none");
}

TEST(JobDiagnostics, BadDevice) {
  EXPECT_EQ(error_of(kHead + R"(, "device": "cuda:x"})"),
            "jobs.jsonl:1:112: error: bad device; expected \"cpu\", \"cuda\" or \"cuda:<index>\"");
}

TEST(JobDiagnostics, PartWithoutParts) {
  EXPECT_EQ(error_of(kHead + R"(, "part": 1})"),
            "jobs.jsonl:1:112: error: bad part; expected \"part\" and \"parts\" together, whole numbers with 1 <= part "
            "<= parts");
}

TEST(JobDiagnostics, PartBeyondParts) {
  EXPECT_EQ(error_of(kHead + R"(, "parts": 2, "part": 3})"),
            "jobs.jsonl:1:124: error: bad part; expected \"part\" and \"parts\" together, whole numbers with 1 <= part "
            "<= parts");
}

TEST(JobArgument, InlineJsonOrAFile) {
  EXPECT_EQ(jobs_from_argument(job_json(relu_job())).at(0).backend, "impl1");
  const std::string path = ::testing::TempDir() + "/jobs_" + std::to_string(getpid()) + ".jsonl";
  std::ofstream(path) << job_json(relu_job()) << "\n" << job_json(relu_job().only("x")) << "\n";
  EXPECT_EQ(jobs_from_argument(path).size(), 2u);
  std::ofstream(path, std::ios::trunc) << "\n";
  EXPECT_THROW(jobs_from_argument(path), JobError);
  std::remove(path.c_str());
  try {
    jobs_from_argument(path);
    ADD_FAILURE() << "a missing file was accepted";
  } catch (const JobError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path + ":1:1: error: cannot read the job file; expected", 0), 0u)
        << error.what();
  }
}

TEST(Job, SaltText) {
  EXPECT_EQ(salt_text(0xabc), "0x0000000000000abc");
  EXPECT_EQ(parse_salt("0x0000000000000abc"), 0xabcu);
  EXPECT_EQ(parse_salt("12"), 12u);
  EXPECT_FALSE(parse_salt("-1"));
  EXPECT_FALSE(parse_salt("0x"));
  EXPECT_FALSE(parse_salt("12a"));
}

}  // namespace
}  // namespace backendbench
