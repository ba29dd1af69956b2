// Tests of the generating backends' plain functions (build_tests/frontends/cli): reading a kernel
// out of an answer, the prompts rendered from templates/llm_*.txt.in, the feedback cases and salt
// of the hold-out, and model prices. The loop end to end is tested by llm_end_to_end.py.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "cli/generation_phase.h"
#include "agents/kernel_prompt.h"
#include "agents/reward.h"
#include "cli/run_request.h"
#include "language/diagnostic.h"

namespace backendbench::cli {
namespace {

const std::string kTemplates = BACKENDBENCH_TEST_SOURCE_DIR "/templates";

TEST(FencedBlock, TheFirstBlockIsTheKernel) {
  EXPECT_EQ(first_fenced_block("Here:\n```cpp\nint a;\n```\nand\n```cpp\nint b;\n```\n"), "int a;\n");
  EXPECT_EQ(first_fenced_block("```\nx = 1\n```"), "x = 1\n");
  EXPECT_EQ(first_fenced_block("  ```python\r\ndef f():\r\n    pass\r\n  ```\r\n"), "def f():\n    pass\n");
}

TEST(FencedBlock, NoBlockOrAnUnclosedOneIsNoCode) {
  EXPECT_FALSE(first_fenced_block("I cannot write this kernel."));
  EXPECT_FALSE(first_fenced_block("```cpp\nint a;\n"));  // cut at max_tokens
}

PromptOperator add_operator() {
  return {"add.Tensor", "add__Tensor", "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
          "at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)",
          {"smoke", "edge"}, {"((T([2, 3], f32), T([3], f32)), {})", "((T([4], bf16), T([4], bf16)), {'alpha': 2})"}};
}

TEST(Prompt, FirstRoundGivesTheSchemaSignatureInputsContractAndDevice) {
  const PromptWriter writer(kTemplates, KernelLanguage::kCpp, "cpu", "2.15.0");
  const std::string system = writer.system(add_operator());
  const std::string prompt = writer.prompt(add_operator(), std::nullopt);
  EXPECT_NE(system.find(add_operator().declaration), std::string::npos) << system;
  EXPECT_NE(system.find("add__Tensor/add__Tensor_implementation_<N>.cpp"), std::string::npos);
  EXPECT_NE(system.find("calling the operator itself"), std::string::npos);
  EXPECT_NE(system.find("Tensor(a!)"), std::string::npos);
  EXPECT_NE(system.find("```cpp"), std::string::npos);
  EXPECT_NE(prompt.find("Operator: add.Tensor\n"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Schema: aten::add.Tensor(Tensor self"), std::string::npos);
  EXPECT_NE(prompt.find("Device: cpu"), std::string::npos);
  EXPECT_NE(prompt.find("((T([4], bf16), T([4], bf16)), {'alpha': 2})"), std::string::npos);
  EXPECT_EQ(prompt.find("previous file"), std::string::npos);
}

TEST(Prompt, LaterRoundsCarryTheFailuresAndThePreviousFile) {
  const PromptWriter writer(kTemplates, KernelLanguage::kCpp, "cpu", "2.15.0");
  const std::string prompt = writer.prompt(
      add_operator(), PreviousAttempt{2, "failed 1 of 4 cases:", {"- edge: add.Tensor case c: expected 3, got 2"}, "int previous;\n", false});
  EXPECT_NE(prompt.find("Your previous file (round 2) failed 1 of 4 cases:\n- edge: add.Tensor case c: expected 3, got 2"), std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("```cpp\nint previous;\n\n```"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Fix what failed"), std::string::npos);
  const std::string passed = writer.prompt(add_operator(), PreviousAttempt{3, "passed all 4 of its cases.", {}, "int p;\n", true});
  EXPECT_NE(passed.find("Write a faster version"), std::string::npos) << passed;
}

TEST(Prompt, PythonKernelsGetThePythonContract) {
  const PromptWriter writer(kTemplates, KernelLanguage::kPython, "cuda", "2.11.0");
  const std::string system = writer.system(add_operator());
  EXPECT_NE(system.find("def add__Tensor_kernel_impl(*args, **kwargs)"), std::string::npos) << system;
  EXPECT_NE(system.find("add__Tensor/add__Tensor_implementation_<N>.py"), std::string::npos);
  EXPECT_NE(system.find("```python"), std::string::npos);
  EXPECT_EQ(system.find("at::Tensor add__Tensor_kernel_impl"), std::string::npos);
}

TEST(Prompt, ABrokenTemplateStopsBeforeAnyQuestion) {
  const std::string folder = files::temporary_directory() + "/backendbench_prompt_templates_" + std::to_string(::getpid());
  files::make_directories(folder);
  for (const char* name : {"llm_system.txt.in", "llm_contract_cpp.txt.in", "llm_feedback.txt.in"}) {
    std::ifstream in(kTemplates + "/" + name);
    std::ofstream(folder + "/" + name) << in.rdbuf();
  }
  std::ofstream(folder + "/llm_prompt.txt.in") << "Operator: ${operator}\n${frobnicate}\n";
  try {
    PromptWriter(folder, KernelLanguage::kCpp, "cpu", "2.15.0");
    ADD_FAILURE() << "an unknown placeholder was accepted";
  } catch (const DiagnosticError& error) {
    EXPECT_NE(std::string(error.what()).find("llm_prompt.txt.in:2:1: error: unknown placeholder 'frobnicate'"), std::string::npos)
        << error.what();
  }
  files::remove_tree(folder);
}

TEST(HoldOut, FeedbackGetsEveryOtherCaseAndTheFirst) {
  std::vector<SuiteManifest::Case> cases;
  for (const char* name : {"a", "b", "c", "d", "e"}) cases.push_back({name, "", "", 0, 1, 1});
  EXPECT_EQ(feedback_case_names(cases), (std::vector<std::string>{"a", "c", "e"}));
  EXPECT_EQ(feedback_case_names({cases[0]}), std::vector<std::string>{"a"});
}

TEST(HoldOut, TheFeedbackSaltDiffersFromTheRunsAndIsFixedByIt) {
  for (uint64_t salt : {uint64_t{0}, uint64_t{0x11}, ~uint64_t{0}}) {
    EXPECT_NE(feedback_salt_of(salt), salt);
    EXPECT_EQ(feedback_salt_of(salt), feedback_salt_of(salt));
  }
  EXPECT_NE(feedback_salt_of(1), feedback_salt_of(2));
}

TEST(Prices, KnownOnlyWherePublished) {
  EXPECT_EQ(known_prices("claude-sonnet-4-20250514"), std::make_pair(3.0, 15.0));
  EXPECT_FALSE(known_prices("my-local-model"));
}

TEST(KernelLanguage, NamesAndExtensions) {
  EXPECT_EQ(kernel_language_named("triton"), KernelLanguage::kPython);
  EXPECT_EQ(kernel_language_named("cuda"), KernelLanguage::kCuda);
  EXPECT_FALSE(kernel_language_named("rust"));
  EXPECT_STREQ(kernel_extension(KernelLanguage::kCuda), ".cu");
}

TEST(RewardCandidates, ALineWithEveryField) {
  const RewardCandidate candidate =
      reward_candidate_from_json(R"({"id": 7, "op": "add.Tensor", "language": "cuda", "source": "// k\n"})", "<stdin>:1");
  EXPECT_EQ(candidate.id, "7");
  EXPECT_EQ(candidate.op, "add.Tensor");
  EXPECT_EQ(candidate.language, KernelLanguage::kCuda);
  EXPECT_EQ(candidate.source, "// k\n");
  EXPECT_EQ(reward_candidate_from_json(R"({"op": "relu", "source": ""})", "x").language, KernelLanguage::kCpp) << "cpp by default";
}

// One test per diagnostic of a candidate's line: located, with the expected form.
TEST(RewardCandidates, EachBadLineIsOneLocatedError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "<stdin>:3: error: not JSON"},
      {"[1, 2]", "<stdin>:3: error: not a JSON object; expected"},
      {R"({"op": "relu", "source": "", "kernel": 1})", "<stdin>:3: error: unknown field 'kernel'; expected id, op, language and source"},
      {R"({"id": [1], "op": "relu", "source": ""})", "<stdin>:3: error: bad id; expected a string or an integer"},
      {R"({"source": ""})", "<stdin>:3: error: no op; expected the operator as a string"},
      {R"({"op": "relu", "language": "rust", "source": ""})", "<stdin>:3: error: bad language; expected cpp, cuda or python"},
      {R"({"op": "relu"})", "<stdin>:3: error: no source; expected the kernel file's whole text as a string"},
  };
  for (const auto& [line, expected] : cases) {
    try {
      reward_candidate_from_json(line, "<stdin>:3");
      ADD_FAILURE() << line << " was read";
    } catch (const DiagnosticError& error) {
      EXPECT_EQ(std::string(error.what()).rfind(expected, 0), 0u) << line << " -> " << error.what();
    }
  }
}

TEST(RewardCandidates, ARewardsJsonCarriesItsVerdictAndSpeedup) {
  Reward reward;
  reward.id = "a";
  reward.op = "relu.default";
  reward.language = "cpp";
  reward.outcome = "passed";
  reward.correct = true;
  reward.passed = 16;
  reward.speedup = 1.5;
  reward.speedup_low = 1.2;
  reward.speedup_high = NAN;
  reward.timed_cases = 2;
  reward.flags = {{"suspect", 1}};
  const nlohmann::json json = reward_json(reward);
  EXPECT_EQ(json["schema"], "backendbench-reward");
  EXPECT_EQ(json["outcome"], "passed");
  EXPECT_EQ(json["passed"], 16);
  EXPECT_DOUBLE_EQ(json["speedup"].get<double>(), 1.5);
  EXPECT_TRUE(json["speedup_high"].is_null()) << "an interval bound that is not a number is null, JSON has no NaN";
  EXPECT_EQ(json["flags"]["suspect"], 1);
  reward.speedup.reset();
  EXPECT_TRUE(reward_json(reward)["speedup"].is_null() && reward_json(reward)["speedup_low"].is_null()) << "not timed";
}

}  // namespace
}  // namespace backendbench::cli
