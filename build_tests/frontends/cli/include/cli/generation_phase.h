// The generating backends' part of `backendbench run` (--backend llm or kernel_agent): from the
// run's request and its built suites, the operators and their feedback cases, the model client
// (live, recording, or replaying), the prompts and the candidate bench; then the generation loop,
// which leaves the kept kernels in <run>/kernels for the rest of the run to score.
//
// The hold-out: a candidate is checked on the feedback cases only (every other case of each
// operator in each suite, the first included) with the feedback salt; the kept kernels are then
// scored like any kernel folder, on every case, with the run's own salt (other input values).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/generation_loop.h"
#include "planner/build_tree.h"
#include "cli/run_request.h"
#include "planner/run.h"

namespace backendbench::cli {

// The command stands on the rooms below it: the llm and kernel_agent loops, and the planner.
using namespace backendbench::agents;  // NOLINT(google-build-using-namespace)
using namespace backendbench::planner;   // NOLINT(google-build-using-namespace)

// The cases a candidate is checked on: every other case (0, 2, 4, ...) of the operator in a suite.
std::vector<std::string> feedback_case_names(const std::vector<SuiteManifest::Case>& cases);

// The salt of the feedback draws: derived from the run's, and never equal to it.
uint64_t feedback_salt_of(uint64_t run_salt);

struct GenerationPhase {
  GenerationResult result;
  uint64_t feedback_salt = 0;
  std::string client;  // what answered: "anthropic claude-... at https://...", "replay of DIR"
};

// Runs the loop for the request's operators; prints progress; writes under `run_directory`.
// Throws CliError when nothing can be asked (no operator, a template that does not render).
GenerationPhase run_generation(const RunRequest& request, const BuildTree& tree, const std::string& run_directory,
                               uint64_t run_salt, const std::string& templates_directory, const std::string& logs);

// A replay draws what its recording drew: the salt of the cassette's recorded run, unless the
// request gives one.
void replay_recorded_salt(RunRequest& request);

// A recording keeps the run's salt and command (<record>/cassette.json).
void record_cassette(const GenerationChoice& choice, uint64_t salt, const std::string& command_line);

// The run's generation phase: what the loop needs built, then the loop, which writes the kernels
// the run then scores. nullopt when that build fails (said on stderr).
std::optional<GenerationPhase> generate_kernels_phase(planner::Run& run, const RunRequest& request);

// run.json's "generation": the loop's operators, each with how its kept kernel did on the hold-out.
nlohmann::json generation_run_json(const GenerationChoice& choice, const GenerationPhase& phase, uint64_t holdout_salt,
                                   const std::vector<Verdict>& verdicts);

}  // namespace backendbench::cli
