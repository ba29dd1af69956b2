// What the llm backends ask a model: the system text (the kernel contract for the operator, in
// the chosen language, and what the checks forbid) and the prompt (the operator, its schema, the
// inputs it is checked on, and from the second round on, what failed last time with the previous
// file), rendered from templates/llm_*.txt.in; and how a kernel is read back from an answer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emit/template.h"

namespace backendbench::agents {

enum class KernelLanguage { kCpp, kCuda, kPython };
const char* kernel_language_name(KernelLanguage language);  // cpp, cuda, python
const char* kernel_extension(KernelLanguage language);      // .cpp, .cu, .py
// The language a name selects (cpp, cuda, python, triton: python); nullopt for another name.
std::optional<KernelLanguage> kernel_language_named(const std::string& name);

struct PromptOperator {
  std::string op;           // display name: relu.default
  std::string folder;       // kernel folder: relu__default
  std::string schema;       // aten::relu(Tensor self) -> Tensor
  std::string declaration;  // the exact C++ declaration (cpp, cuda)
  std::vector<std::string> suites;
  std::vector<std::string> inputs;  // trace argument texts of the feedback cases
};

// What happened to a worker's previous candidate, for its next prompt.
struct PreviousAttempt {
  int round = 0;
  std::string outcome;                // "did not compile.", "failed 3 of 8 cases.", "passed every case."
  std::vector<std::string> failures;  // compiler errors, failed cases with their messages
  std::string code;                   // the previous file ("" when the answer had none)
  bool passed = false;
};

class PromptWriter {
 public:
  // Throws DiagnosticError naming a template that is missing or does not render.
  PromptWriter(std::string templates_directory, KernelLanguage language, std::string device, std::string torch_version);

  std::string system(const PromptOperator& op) const;
  std::string prompt(const PromptOperator& op, const std::optional<PreviousAttempt>& previous) const;
  KernelLanguage language() const { return language_; }

 private:
  std::string file_of(const PromptOperator& op) const;

  std::string device_, torch_version_;
  KernelLanguage language_;
  // Read once: every prompt of the run renders them.
  emit::CodeTemplate system_, contract_, prompt_, feedback_;
};

// The contents of the answer's first fenced code block (```lang ... ```); nullopt when the answer
// has none or its first block is not closed.
std::optional<std::string> first_fenced_block(const std::string& answer);

}  // namespace backendbench::agents
