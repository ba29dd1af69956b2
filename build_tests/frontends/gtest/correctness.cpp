// The body of every correctness test: check_case, and the verdict turned into GoogleTest's
// terms (properties, skip, failures) and appended to the verdicts file.
#include "backendbench/correctness.h"

#include <gtest/gtest.h>

#include <iostream>

#include "backendbench/run_case.h"

namespace backendbench {
namespace {

class CorrectnessTest : public ::testing::Test {
 public:
  CorrectnessTest(const OperatorSpec& op, const CaseSpec& spec, const Backend& backend, const Settings& settings)
      : op_(op), spec_(spec), backend_(backend), settings_(settings) {}

  void TestBody() override {
    // A Python kernel's module is imported on its first case (Backend::unusable): a slow import
    // (torch._decomp, Triton, a library's own start-up) is not the case's time.
    (void)backend_.unusable();
    restart_case_clock();
    const Verdict verdict = check_case(op_, spec_, backend_, settings_);
    RecordProperty("case_arguments", verdict.arguments);
    RecordProperty("case_source", verdict.trace_file + ":" + std::to_string(verdict.trace_line));
    RecordProperty("case_count", std::to_string(verdict.count));
    RecordProperty("case_models", verdict.models);
    RecordProperty("salt", salt_text(verdict.salt));
    if (!settings_.verdicts_path.empty()) append_verdict(settings_.verdicts_path, verdict);
    if (verdict.status == Verdict::Status::kSkipped) GTEST_SKIP() << verdict.skip_reason;
    RecordProperty("max_abs_error", std::to_string(verdict.max_abs_error));
    RecordProperty("max_rel_error", std::to_string(verdict.max_rel_error));
    // Also on stdout, so that CTest's JUnit (system-out) carries it, not only gtest's XML.
    std::cout << "[ errors   ] " << verdict.case_name << " max_abs_error=" << verdict.max_abs_error
              << " max_rel_error=" << verdict.max_rel_error << " " << verdict.arguments << "\n";
    for (const std::string& error : verdict.errors) ADD_FAILURE() << error;
  }

 private:
  const OperatorSpec& op_;
  const CaseSpec& spec_;
  const Backend& backend_;
  const Settings& settings_;
};

}  // namespace

void register_correctness_tests(const Settings& settings) {
  for (const OperatorSpec* op : registered_operators()) {
    for (const Backend* backend : backends().for_operator(op->display, /*with_calibration=*/false)) {
      for (size_t c = 0; c < op->case_count; ++c) {
        const CaseSpec& spec = op->cases[c];
        const std::string description = std::string(spec.name) + " " + spec.arguments + " (" + spec.file + ":" +
                                        std::to_string(spec.line) + ")";
        ::testing::RegisterTest((std::string(op->suite) + "/" + op->identifier).c_str(),
                                (backend->name() + "/" + spec.name).c_str(), nullptr, description.c_str(), spec.file,
                                spec.line, [op, &spec, backend, &settings]() -> ::testing::Test* {
                                  return new CorrectnessTest(*op, spec, *backend, settings);
                                });
      }
    }
  }
}

}  // namespace backendbench
