// The body of every correctness test: one case of a job (run_job.h), its verdict turned into
// GoogleTest's terms (properties, skip, failures) and appended to the verdicts file.
#include "backendbench/correctness.h"

#include <gtest/gtest.h>

#include <iostream>

#include "supervisor/run_job.h"
#include "language/naming.h"

namespace backendbench {
namespace {

class CorrectnessTest : public ::testing::Test {
 public:
  CorrectnessTest(const ResolvedJob& job, size_t index) : job_(job), index_(index) {}

  void TestBody() override {
    // A Python kernel's module is imported on its first case (Backend::unusable): a slow import
    // (torch._decomp, Triton, a library's own start-up) is not the case's time.
    if (job_.backend != nullptr) (void)job_.backend->unusable();
    restart_case_clock();
    const Verdict verdict = run_job_case(job_, index_);
    RecordProperty("case_arguments", verdict.arguments);
    RecordProperty("case_source", verdict.trace_file + ":" + std::to_string(verdict.trace_line));
    RecordProperty("case_count", std::to_string(verdict.count));
    RecordProperty("case_models", verdict.models);
    RecordProperty("salt", salt_text(verdict.salt));
    if (!job_.settings.verdicts_path.empty()) append_verdict(job_.settings.verdicts_path, verdict);
    if (verdict.status == Verdict::Status::kSkipped) GTEST_SKIP() << verdict.skip_reason;
    RecordProperty("max_abs_error", std::to_string(verdict.max_abs_error));
    RecordProperty("max_rel_error", std::to_string(verdict.max_rel_error));
    if (verdict.aten_share >= 0) RecordProperty("aten_share", std::to_string(verdict.aten_share));
    // Also on stdout, so that CTest's JUnit (system-out) carries it, not only gtest's XML.
    std::cout << "[ errors   ] " << verdict.case_name << " max_abs_error=" << verdict.max_abs_error
              << " max_rel_error=" << verdict.max_rel_error
              << (verdict.aten_share >= 0 ? " aten_share=" + std::to_string(verdict.aten_share) : std::string()) << " "
              << verdict.arguments << "\n";
    for (const std::string& error : verdict.errors) ADD_FAILURE() << error;
  }

 private:
  const ResolvedJob& job_;
  size_t index_;
};

// <suite>/<operator folder>, as naming spells it (the job's own text for an operator that does
// not parse: its cases fail, under a name that says which).
std::string test_suite_of(const Job& job) {
  const std::optional<naming::OperatorName> name = naming::OperatorName::from_user(job.op);
  return name ? naming::gtest_suite(job.suite, *name) : job.suite + "/" + job.op;
}

}  // namespace

void register_correctness_tests(const Settings& settings) {
  const std::vector<Job> jobs = settings.jobs.empty() ? every_job(Job::Mode::kCheck, false) : settings.jobs;
  // Tests hold references into it until the process ends.
  static const auto* resolved = new std::vector<ResolvedJob>(resolve_jobs(jobs, settings, false));
  for (const ResolvedJob& job : *resolved) {
    const std::string test_suite = test_suite_of(job.job);
    for (size_t c = 0; c < job.case_names.size(); ++c) {
      const CaseSpec* spec = job.cases[c];
      const std::string description =
          spec != nullptr ? std::string(spec->name) + " " + spec->arguments + " (" + spec->file + ":" +
                                std::to_string(spec->line) + ")"
                          : job.case_names[c];
      ::testing::RegisterTest(test_suite.c_str(), naming::gtest_test(job.job.backend, job.case_names[c]).c_str(), nullptr,
                              description.c_str(), spec != nullptr ? spec->file : "job",
                              spec != nullptr ? spec->line : 0,
                              [&job, c]() -> ::testing::Test* { return new CorrectnessTest(job, c); });
    }
  }
}

}  // namespace backendbench
