// Unit tests of run_job.h: a job resolved against this process's case tables and backends, its
// cases run (the reference on the CPU), and the one rule for a case without a verdict.
#include <gtest/gtest.h>

#include "supervisor/run_job.h"
#include "test_support.h"

namespace backendbench {
namespace {

const CaseSpec kReluCases[] = {{"f32_4", "((T([4], f32),), {})", "t.txt", 1, 3, 1, "m"},
                               {"f32_2x3", "((T([2, 3], f32),), {})", "t.txt", 2, 4, 1, "m"}};
const OperatorSpec kJobRelu = {"jobtest", "relu.default", "relu__default", "aten::relu", "", kReluCases, 2};
const OperatorRegistrar kRegistered(&kJobRelu);

Job relu_job(const std::string& backend) {
  Job job;
  job.suite = "jobtest";
  job.op = "relu.default";
  job.backend = backend;
  job.device = "cpu";
  return job;
}

Settings cpu_settings() {
  Settings settings;
  settings.device = c10::Device(c10::kCPU);
  settings.salt = 5;
  return settings;
}

TEST(SettingsFor, AppliesOnlyWhatTheJobFixes) {
  Settings settings;
  settings.draws = 3;
  settings.salt = 5;
  Job job = relu_job("aten");
  job.salt = 9;
  const Settings applied = settings_for(job, settings);
  EXPECT_EQ(applied.salt, 9u);
  EXPECT_TRUE(applied.salt_given);
  EXPECT_EQ(applied.draws, 3);
  ASSERT_TRUE(applied.device);
  EXPECT_TRUE(applied.device->is_cpu());
}

TEST(ResolveJobs, EveryCaseWhenTheJobNamesNone) {
  const std::vector<ResolvedJob> resolved = resolve_jobs({relu_job("aten")}, cpu_settings(), false);
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0].problem, "");
  EXPECT_EQ(resolved[0].case_names, (std::vector<std::string>{"f32_4", "f32_2x3"}));
  for (size_t c = 0; c < 2; ++c) {
    const Verdict verdict = run_job_case(resolved[0], c);
    EXPECT_TRUE(verdict.passed()) << (verdict.errors.empty() ? "" : verdict.errors[0]);
    EXPECT_EQ(verdict.case_name, resolved[0].case_names[c]);
    EXPECT_EQ(verdict.salt, 5u);
  }
}

TEST(ResolveJobs, TheNamedCasesInTheirOrderAndTheJobsSalt) {
  Job job = relu_job("aten");
  job.cases = {"f32_2x3"};
  job.salt = 11;
  const ResolvedJob resolved = resolve_jobs({job}, cpu_settings(), false).at(0);
  ASSERT_EQ(resolved.cases.size(), 1u);
  EXPECT_EQ(resolved.cases[0], &kReluCases[1]);
  EXPECT_EQ(run_job_case(resolved, 0).salt, 11u);
}

TEST(ResolveJobs, APartRunsItsShareOfTheCases) {
  Job job = relu_job("aten");
  job.part = 2;
  job.parts = 2;
  const ResolvedJob second = resolve_jobs({job}, cpu_settings(), false).at(0);
  ASSERT_EQ(second.cases.size(), 1u);
  EXPECT_EQ(second.cases[0], &kReluCases[1]);
  EXPECT_TRUE(run_job_case(second, 0).passed());
  job.part = 1;
  EXPECT_EQ(resolve_jobs({job}, cpu_settings(), false).at(0).case_names, std::vector<std::string>{"f32_4"});
}

TEST(ResolveJobs, ABackendTheWorkersDidNotListFailsEveryCase) {
  const ResolvedJob resolved = resolve_jobs({relu_job("impl9")}, cpu_settings(), false).at(0);
  EXPECT_EQ(resolved.backend, nullptr);
  const Verdict verdict = run_job_case(resolved, 1);
  EXPECT_FALSE(verdict.passed());
  EXPECT_EQ(verdict.backend, "impl9");
  EXPECT_EQ(verdict.case_name, "f32_2x3");
  ASSERT_EQ(verdict.errors.size(), 1u);
  EXPECT_NE(verdict.errors[0].find("no backend impl9 for relu.default"), std::string::npos) << verdict.errors[0];
}

TEST(ResolveJobs, AnUnknownCaseFails) {
  Job job = relu_job("aten");
  job.cases = {"f32_4", "f64_9"};
  const ResolvedJob resolved = resolve_jobs({job}, cpu_settings(), false).at(0);
  EXPECT_TRUE(run_job_case(resolved, 0).passed());
  const Verdict missing = run_job_case(resolved, 1);
  EXPECT_FALSE(missing.passed());
  EXPECT_EQ(missing.errors.at(0), "jobtest/relu.default/aten case f64_9: relu.default has no case f64_9 in suite jobtest");
}

TEST(ResolveJobs, AnUnknownOperatorFails) {
  Job job = relu_job("aten");
  job.op = "frobnicate.default";
  const ResolvedJob resolved = resolve_jobs({job}, cpu_settings(), false).at(0);
  const Verdict verdict = run_job_case(resolved, 0);
  EXPECT_FALSE(verdict.passed());
  EXPECT_NE(verdict.errors.at(0).find("no operator frobnicate.default in suite jobtest"), std::string::npos);
}

TEST(EveryJob, OneJobPerOperatorAndBackend) {
  bool found = false;
  for (const Job& job : every_job(Job::Mode::kCheck, false)) {
    found = found || (job.suite == "jobtest" && job.op == "relu.default" && job.backend == "aten" && job.cases.empty());
  }
  EXPECT_TRUE(found);
}

TEST(JobVerdicts, ACaseWithoutAVerdictFailsWithTheReason) {
  const Job job = relu_job("impl1");
  Verdict passed;
  passed.suite = "jobtest";
  passed.op = "relu.default";
  passed.backend = "impl1";
  passed.case_name = "a";
  Verdict other_backend = passed;
  other_backend.backend = "aten";
  other_backend.case_name = "b";
  // A crash record for "a" written first, then the restarted process's verdict: the last counts.
  Verdict crashed = passed;
  crashed.status = Verdict::Status::kFailed;
  const std::vector<Verdict> verdicts =
      job_verdicts(job, {"a", "b"}, {crashed, passed, other_backend}, "no verdict: its process died of SIGSEGV");
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_TRUE(verdicts[0].passed());
  EXPECT_FALSE(verdicts[1].passed());
  EXPECT_EQ(verdicts[1].backend, "impl1");
  EXPECT_EQ(verdicts[1].device, "cpu");
  ASSERT_EQ(verdicts[1].errors.size(), 1u);
  EXPECT_EQ(verdicts[1].errors[0], "jobtest/relu.default/impl1 case b: no verdict: its process died of SIGSEGV");
}

}  // namespace
}  // namespace backendbench
