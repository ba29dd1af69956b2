// A job's verdicts read back; see job_verdicts.h.
#include "backendbench/job_verdicts.h"

#include <string_view>
#include <unordered_map>

namespace backendbench {

std::vector<Verdict> job_verdicts(const Job& job, const std::vector<std::string>& case_names,
                                  const std::vector<Verdict>& written, const std::string& why_missing,
                                  MissingVerdict missing_verdict) {
  // The job's written verdicts by case, the last written winning (a restarted process's, after a
  // crash record): one pass, as a run of the whole TorchBench suite has 17,546 cases.
  std::unordered_map<std::string_view, const Verdict*> by_case;
  for (const Verdict& verdict : written) {
    if (verdict.suite == job.suite && verdict.op == job.op && verdict.backend == job.backend) {
      by_case[verdict.case_name] = &verdict;
    }
  }
  std::vector<Verdict> verdicts;
  for (const std::string& case_name : case_names) {
    if (const auto found = by_case.find(case_name); found != by_case.end()) {
      verdicts.push_back(*found->second);
      continue;
    }
    Verdict missing;
    missing.suite = job.suite;
    missing.op = job.op;
    missing.case_name = case_name;
    missing.backend = job.backend;
    missing.frontend = job.mode == Job::Mode::kTime ? "bench" : "tests";
    missing.device = job.device.value_or("");
    missing.salt = job.salt.value_or(0);
    if (missing_verdict == MissingVerdict::kSkipped) {
      missing.status = Verdict::Status::kSkipped;
      missing.skip_reason = why_missing;
    } else {
      missing.status = Verdict::Status::kFailed;
      missing.errors.push_back(job.name() + " case " + case_name + ": " + why_missing);
    }
    verdicts.push_back(missing);
  }
  return verdicts;
}

}  // namespace backendbench
