// The response side of a job (language/job.h), without libtorch, for whoever planned it (the
// command, the llm backends): the job's verdicts read back from the files its processes wrote.
#pragma once

#include <string>
#include <vector>

#include "backendbench/verdict.h"
#include "language/job.h"

namespace backendbench {

// What a case without a verdict becomes: a failure (its process ended first, or nothing ran it),
// or, where the run itself was stopped from outside before it (planner/interruption.h), skipped.
enum class MissingVerdict { kFails, kSkipped };

// The job's verdicts, one per name in `case_names` (the job's cases, in order), from those its
// processes wrote: a case without one fails with `why_missing` (the process's last output, say),
// or is skipped with it as the reason. Verdicts of other jobs are ignored. The one place a case
// without a verdict becomes a failure.
std::vector<Verdict> job_verdicts(const Job& job, const std::vector<std::string>& case_names,
                                  const std::vector<Verdict>& written, const std::string& why_missing,
                                  MissingVerdict missing = MissingVerdict::kFails);

}  // namespace backendbench
