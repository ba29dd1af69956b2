// A job's verdicts read back; see job_verdicts.h.
#include "backendbench/job_verdicts.h"

namespace backendbench {

std::vector<Verdict> job_verdicts(const Job& job, const std::vector<std::string>& case_names,
                                  const std::vector<Verdict>& written, const std::string& why_missing) {
  std::vector<Verdict> verdicts;
  for (const std::string& case_name : case_names) {
    const Verdict* found = nullptr;
    for (const Verdict& verdict : written) {
      if (verdict.suite == job.suite && verdict.op == job.op && verdict.backend == job.backend &&
          verdict.case_name == case_name) {
        found = &verdict;  // the last written: a restarted process's, after a crash record
      }
    }
    if (found != nullptr) {
      verdicts.push_back(*found);
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
    missing.status = Verdict::Status::kFailed;
    missing.errors.push_back(job.name() + " case " + case_name + ": " + why_missing);
    verdicts.push_back(missing);
  }
  return verdicts;
}

}  // namespace backendbench
