// Prompts for the llm backends; see kernel_prompt.h.
#include "agents/kernel_prompt.h"

#include <sstream>

#include "emit/template.h"
#include "language/naming.h"
#include "planner/text.h"

namespace backendbench::agents {
using planner::joined;

const char* kernel_language_name(KernelLanguage language) {
  switch (language) {
    case KernelLanguage::kCpp: return "cpp";
    case KernelLanguage::kCuda: return "cuda";
    case KernelLanguage::kPython: return "python";
  }
  return "cpp";
}

const char* kernel_extension(KernelLanguage language) {
  switch (language) {
    case KernelLanguage::kCpp: return ".cpp";
    case KernelLanguage::kCuda: return ".cu";
    case KernelLanguage::kPython: return ".py";
  }
  return ".cpp";
}

std::optional<KernelLanguage> kernel_language_named(const std::string& name) {
  if (name == "cpp" || name == "c++") return KernelLanguage::kCpp;
  if (name == "cuda") return KernelLanguage::kCuda;
  if (name == "python" || name == "triton") return KernelLanguage::kPython;
  return std::nullopt;
}

PromptWriter::PromptWriter(std::string templates_directory, KernelLanguage language, std::string device, std::string torch_version)
    : device_(std::move(device)),
      torch_version_(std::move(torch_version)),
      language_(language),
      system_(emit::CodeTemplate::load(templates_directory + "/llm_system.txt.in")),
      contract_(emit::CodeTemplate::load(templates_directory + "/llm_contract_" + kernel_language_name(language) + ".txt.in")),
      prompt_(emit::CodeTemplate::load(templates_directory + "/llm_prompt.txt.in")),
      feedback_(emit::CodeTemplate::load(templates_directory + "/llm_feedback.txt.in")) {
  // Rendered once with stand-in values, so that a broken template stops the run before any question.
  PromptOperator probe{"relu.default", "relu", "aten::relu(Tensor self) -> Tensor", "at::Tensor relu_kernel_impl(const at::Tensor& self)", {"smoke"}, {"((T([2], f32),), {})"}};
  system(probe);
  prompt(probe, PreviousAttempt{1, "failed.", {"x"}, "int x;", false});
}

std::string PromptWriter::file_of(const PromptOperator& op) const {
  return op.folder + "/" + op.folder + "_implementation_<N>" + kernel_extension(language_);
}

std::string PromptWriter::system(const PromptOperator& op) const {
  const std::string language = kernel_language_name(language_);
  emit::TemplateEnvironment contract = {{"file", file_of(op)},
                                        {"torch_version", torch_version_},
                                        {"device", device_},
                                        {"operator", op.op}};
  if (language_ == KernelLanguage::kPython) {
    contract["function"] = naming::kernel_function(op.folder);
  } else {
    contract["declaration"] = op.declaration;
  }
  return system_.render({{"contract", contract_.render(contract)}, {"fence", language}});
}

std::string PromptWriter::prompt(const PromptOperator& op, const std::optional<PreviousAttempt>& previous) const {
  std::vector<std::string> feedback;
  if (previous) {
    feedback.push_back(feedback_.render(
                              {{"round", std::to_string(previous->round)},
                               {"outcome", previous->outcome},
                               {"failures", previous->failures},
                               {"fence", kernel_language_name(language_)},
                               {"previous", previous->code.empty() ? std::string("(your answer had no fenced code block)") : previous->code},
                               {"instruction", previous->passed ? "It passed. Write a faster version that still passes."
                                                                : "Fix what failed, and keep what passed passing."}}));
  }
  return prompt_.render(
                {{"operator", op.op},
                 {"schema", op.schema},
                 {"file", file_of(op)},
                 {"device", device_},
                 {"suites", joined(op.suites, ", ")},
                 {"inputs", op.inputs},
                 {"feedback", feedback}});
}

std::optional<std::string> first_fenced_block(const std::string& answer) {
  std::istringstream lines(answer);
  std::string line, code;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    const bool fence = start != std::string::npos && line.compare(start, 3, "```") == 0;
    if (!inside) {
      inside = fence;
      continue;
    }
    if (fence && line.find_first_not_of(" \t`") == std::string::npos) return code;
    code += line + "\n";
  }
  return std::nullopt;
}

}  // namespace backendbench::agents
