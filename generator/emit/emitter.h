// Renders the model into the build tree through templates/: per suite, case tables in fixed
// shards (so CMake knows every output before generation) and a CTest include file; per kernel
// variant, a binding translation unit. Case tables hold no kernels: the CTest entries are the
// only suite output that changes when a kernel is added.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "emit/template.h"
#include "emit/writer.h"
#include "model/model.h"

namespace backendbench::emit {

struct SuiteOutputOptions {
  int shards = 1;
  std::string test_executable;  // absolute path of the suite's gtest executable
  std::string results_directory;  // gtest XML and verdicts (JSON Lines) per CTest entry go here
  int timeout_seconds = 300;
  int case_timeout_seconds = 0;  // per case, inside the test executable (0: none)
  int cases_per_entry = 0;       // an operator with more cases is several entries (job_parts); 0: one
  std::string test_labels;       // CTest labels every entry gets besides its own (";"-separated), e.g. a test tier
  // A kernel with an expect-failure line becomes an entry that passes when the kernel fails
  // with that message: `cmake -P <expect_script>` runs the test and checks its output.
  std::string cmake_command = "cmake";
  std::string expect_script;
};

class Emitter {
 public:
  explicit Emitter(std::string templates_directory);

  // Into a writer rooted at the suite's folder: cases_<k>.cpp for k < shards, ctest.cmake,
  // excluded.csv (operator, arguments, location, reason: one row per excluded input, for people
  // and tools to read), and suite.json (operators, cases and each entry's backends, for tools).
  void emit_suite(const model::Suite& suite, const SuiteOutputOptions& options, OutputWriter& writer) const;
  // Into a writer rooted at the kernels folder: <folder>/<stem>.binding.cpp (.cu for CUDA).
  // `derived`: the variants derived from this kernel (model::derive_variants), with their
  // schemas; each gets a wrapper and an entry point in the same file.
  void emit_kernel_binding(const model::KernelVariant& kernel, const model::Schema& schema,
                           const std::vector<std::pair<model::KernelVariant, model::Schema>>& derived,
                           OutputWriter& writer) const;
  // A candidate's binding (the llm backends, the reward API), in two translation units:
  // <stem>.kernel.cpp, the kernel with its signature check and a function the binding calls,
  // compiled for every candidate; and <stem>.binding.cpp, which names no candidate and is the
  // same text for every candidate of one operator and number, so its object can be kept.
  void emit_candidate_binding(const model::KernelVariant& kernel, const model::Schema& schema,
                              const std::vector<std::pair<model::KernelVariant, model::Schema>>& derived,
                              OutputWriter& writer) const;

  // Into a writer rooted at the kernels folder: kernel_index.cpp, the index of the one library
  // that holds every kernel in `kernels` (their bindings' entries, in order).
  void emit_kernel_index(const std::string& kernels_directory, const std::vector<model::KernelVariant>& kernels,
                         OutputWriter& writer) const;

  static std::string suite_cases_file(int shard);
  static std::string kernel_index_file();
  static std::string suite_ctest_file();
  static std::string suite_exclusions_file();
  static std::string suite_manifest_file();
  static std::string kernel_binding_file(const model::KernelVariant& kernel);
  // A candidate's own translation unit (emit_candidate_binding).
  static std::string candidate_kernel_part_file(const model::KernelVariant& kernel);
  // A two-part .cu kernel's device translation unit (emitted beside its binding).
  static std::string kernel_device_part_file(const model::KernelVariant& kernel);

 private:
  // What a binding holds besides the kernel: one entry per variant and a wrapper per derived one.
  struct BindingParts {
    std::vector<std::string> entries, derived_bindings;
  };
  // `function`: what the bindings call; `source`, `derived_source`: C++ expressions of the
  // entries' source texts; `backend`: of their backend name ("": the variant's own, literally).
  BindingParts binding_parts(const model::KernelVariant& kernel, const model::Schema& schema,
                             const std::vector<std::pair<model::KernelVariant, model::Schema>>& derived,
                             const std::string& function, const std::string& source, const std::string& derived_source,
                             const std::string& backend) const;
  static std::string derived_source_text(const model::KernelVariant& kernel);
  void emit_device_part(const model::KernelVariant& kernel, OutputWriter& writer) const;
  std::string render(const std::string& template_name, TemplateEnvironment environment) const;
  // A row template (case_row, kernel_entry) rendered as one list item, without its newline.
  std::string render_row(const std::string& template_name, TemplateEnvironment environment) const;
  const CodeTemplate& load(const std::string& template_name) const;
  std::string banner(const std::string& template_name, const std::string& source) const;

  std::string templates_directory_;
  mutable std::map<std::string, CodeTemplate> templates_;  // read once, rendered per operator
};

// Every string the emitter writes goes through one of these, so no input text (a trace's
// strings, a path, an expect-failure regex) can end a literal, a comment or an argument early.
// A C++ string literal holding exactly `text`'s bytes.
std::string cpp_string_literal(const std::string& text);
// One CMake argument holding exactly `text` (a bracket argument); throws for a NUL byte.
std::string cmake_argument(const std::string& text);
// `text` for a // comment: control characters and backslashes (a line splice) as \xHH.
std::string comment_text(const std::string& text);

}  // namespace backendbench::emit
