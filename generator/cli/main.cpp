// backendbench-gen: checks trace files, and generates the test suite sources from traces,
// templates and the kernels folder. Every input problem is one diagnostic line and exit 1;
// generation writes nothing until all inputs were read without error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iostream>
#include <map>
#include <set>

#include "emit/emitter.h"
#include "emit/writer.h"
#include "facto/expand.h"
#include "facto/schema_check.h"
#include "model/model.h"
#include "language/parser.h"
#include "language/printer.h"
#include "schema/torch_schema.h"

namespace fs = std::filesystem;
using namespace backendbench;

namespace {

// What a folder argument may hold: the extensions, and the wording of the two errors.
struct InputKind {
  std::vector<std::string> extensions;
  std::string files;   // "trace files"
  std::string expect;  // "*.txt traces or *.json/*.jsonl datasets"
  std::string single;  // "a trace file"
};

const InputKind kTraceInputs = {{".txt", ".json", ".jsonl"}, "trace files", "*.txt traces or *.json/*.jsonl datasets",
                                "a trace file"};
const InputKind kSpecInputs = {{".spec"}, "FACTO specifications", "*.spec files", "a .spec file"};

// Files as given; folders expand to their files of the kind, recursively, sorted.
std::vector<std::string> expand_paths(const std::vector<std::string>& paths, const InputKind& kind) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    if (fs::is_directory(path)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        const std::string extension = entry.path().extension().string();
        if (entry.is_regular_file() &&
            std::find(kind.extensions.begin(), kind.extensions.end(), extension) != kind.extensions.end()) {
          found.push_back(entry.path().string());
        }
      }
      if (found.empty()) throw DiagnosticError({path, 0, 0, "folder holds no " + kind.files, kind.expect});
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(path)) {
      files.push_back(path);
    } else {
      throw DiagnosticError({path, 0, 0, "no such file or folder", kind.single + " or a folder of " + kind.files});
    }
  }
  return files;
}

// Parses every file; prints all diagnostics and returns false if there were errors (warnings,
// such as a file without operators, are printed and do not fail).
bool parse_all(const std::vector<std::string>& files, std::vector<parse::TraceFile>& traces) {
  bool clean = true;
  for (const std::string& file : files) {
    parse::ParseResult result = parse::parse_trace_file(file);
    for (const Diagnostic& warning : result.warnings) std::cerr << warning.str() << "\n";
    for (const Diagnostic& error : result.errors) std::cerr << error.str() << "\n";
    clean = clean && result.errors.empty();
    traces.push_back(std::move(result.trace));
  }
  return clean;
}

int run_check(const std::vector<std::string>& paths) {
  const std::vector<std::string> files = expand_paths(paths, kTraceInputs);
  std::vector<parse::TraceFile> traces;
  const bool clean = parse_all(files, traces);
  std::set<std::string> operators;
  std::set<std::pair<std::string, std::string>> distinct;
  size_t lines = 0;
  for (const auto& trace : traces) {
    for (const auto& section : trace.operators) {
      operators.insert(section.name);
      for (const auto& entry : section.cases) {
        ++lines;
        distinct.insert({section.name, parse::print(entry.arguments)});
      }
    }
  }
  std::cout << "checked " << files.size() << " trace files: " << operators.size() << " operators, " << lines
            << " case lines, " << distinct.size() << " distinct (operator, input) pairs\n";
  if (!clean) std::cout << "errors found; see above\n";
  return clean ? 0 : 1;
}

struct GenerateOptions {
  std::string output;
  std::string templates;
  std::string kernels;
  std::vector<std::string> op_libraries;  // name=listing file
  bool skip_cuda = false;
  bool skip_python = false;
  std::string suite;                // name
  std::vector<std::string> traces;  // files or folders
  int shards = 1;
  std::vector<std::string> ops;
  int top_n = 0;
  int bottom_n = 0;
  bool include_synthetic = false;
  bool overhead_dominated_only = false;
  bool exclude_unknown = false;
  std::string test_executable;
  std::string results_dir;
  int timeout = 300;
  int case_timeout = 0;
  int cases_per_entry = 0;
  std::vector<std::string> test_labels;
  std::string cmake_command = "cmake";
  std::string expect_script;
};

std::vector<model::KernelVariant> find_kernels(const GenerateOptions& options, const model::SchemaSource& schemas) {
  if (options.kernels.empty()) return {};
  std::vector<model::KernelVariant> kernels = model::discover_kernels(options.kernels, schemas);
  if (options.skip_cuda) {
    kernels.erase(std::remove_if(kernels.begin(), kernels.end(), [](const model::KernelVariant& kernel) {
                    const bool skipped = kernel.is_cuda && kernel.is_compiled();  // a .cu (Triton needs no nvcc)
                    if (skipped) std::cout << "skipped (CUDA disabled): " << kernel.path << "\n";
                    return skipped;
                  }),
                  kernels.end());
  }
  if (options.skip_python) {
    kernels.erase(std::remove_if(kernels.begin(), kernels.end(), [](const model::KernelVariant& kernel) {
                    if (kernel.is_python) std::cout << "skipped (no embeddable Python): " << kernel.path << "\n";
                    return kernel.is_python;
                  }),
                  kernels.end());
  }
  return kernels;
}

void report_written(emit::OutputWriter& writer) {
  const auto removed = writer.remove_stale({"generate.stamp"});
  std::cout << "wrote " << writer.changed() << " of " << writer.outputs().size() << " generated files in " << writer.root();
  if (!removed.empty()) std::cout << ", removed " << removed.size() << " stale";
  std::cout << "\n";
}

int run_suite(const GenerateOptions& options) {
  schema::TorchSchemaSource schemas;
  // Read everything first: an error leaves the build tree as it was.
  std::vector<model::KernelVariant> kernels = find_kernels(options, schemas);
  const std::vector<model::KernelVariant> derived = model::derive_variants(kernels, schemas);
  kernels.insert(kernels.end(), derived.begin(), derived.end());
  for (const std::string& library_option : options.op_libraries) {
    const size_t equals = library_option.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw DiagnosticError({"--op-library", 0, 0, "'" + library_option + "' names no listing", "NAME=LISTING_FILE"});
    }
    const model::OpLibrary library =
        model::read_op_library(library_option.substr(0, equals), library_option.substr(equals + 1), schemas);
    std::cout << "op library " << library.name << ": " << library.operators.size() << " operators"
              << (library.unavailable.empty() ? "" : "; cannot run here: " + library.unavailable) << "\n";
    kernels.insert(kernels.end(), library.operators.begin(), library.operators.end());
  }
  std::vector<parse::TraceFile> traces;
  if (!parse_all(expand_paths(options.traces, kTraceInputs), traces)) return 1;
  model::SuiteOptions suite_options;
  suite_options.op_filters = options.ops;
  suite_options.top_n = options.top_n;
  suite_options.bottom_n = options.bottom_n;
  suite_options.include_synthetic = options.include_synthetic;
  suite_options.overhead_dominated_only = options.overhead_dominated_only;
  suite_options.exclude_unknown_operators = options.exclude_unknown;
  const model::Suite suite = model::build_suite(options.suite, traces, schemas, suite_options, kernels);
  for (const std::string& filter : options.ops) {
    if (std::none_of(suite.operators.begin(), suite.operators.end(),
                     [&](const model::Operator& op) { return model::matches_filter(op.name, filter); })) {
      std::cout << "note: --ops '" << filter << "' selects no operator of suite " << suite.name << "\n";
    }
  }
  emit::SuiteOutputOptions output_options;
  output_options.shards = std::max(1, options.shards);
  output_options.test_executable = options.test_executable;
  output_options.results_directory = options.results_dir;
  output_options.timeout_seconds = options.timeout;
  output_options.case_timeout_seconds = options.case_timeout;
  output_options.cases_per_entry = options.cases_per_entry;
  for (const std::string& label : options.test_labels) {
    output_options.test_labels += (output_options.test_labels.empty() ? "" : ";") + label;
  }
  output_options.cmake_command = options.cmake_command;
  output_options.expect_script = options.expect_script;
  emit::OutputWriter writer(options.output);
  emit::Emitter(options.templates).emit_suite(suite, output_options, writer);
  size_t cases = 0;
  for (const auto& op : suite.operators) cases += op.cases.size();
  std::cout << "suite " << suite.name << ": " << suite.operators.size() << " operators, " << cases << " cases included, "
            << suite.exclusions.size() << " excluded, from " << suite.sources.size() << " trace files";
  if (suite.unselected > 0) std::cout << " (" << suite.unselected << " more inputs not selected by the input filters)";
  std::cout << "\n";
  std::map<std::string, size_t> by_reason;
  for (const auto& exclusion : suite.exclusions) ++by_reason[exclusion.reason];
  for (const auto& [reason, count] : by_reason) std::cout << "  excluded " << count << ": " << reason << "\n";
  if (!suite.exclusions.empty()) {
    std::cout << "  every excluded input, with its reason: " << (fs::path(options.output) / emit::Emitter::suite_exclusions_file()).string()
              << "\n";
  }
  report_written(writer);
  return 0;
}

int run_kernels(const GenerateOptions& options) {
  schema::TorchSchemaSource schemas;
  std::vector<model::KernelVariant> kernels = find_kernels(options, schemas);
  // Python kernels have no binding: the runtime loads them through the embedded interpreter.
  kernels.erase(std::remove_if(kernels.begin(), kernels.end(), [](const model::KernelVariant& kernel) { return !kernel.is_compiled(); }),
                kernels.end());
  emit::OutputWriter writer(options.output);
  emit::Emitter emitter(options.templates);
  const std::vector<model::KernelVariant> derived = model::derive_variants(kernels, schemas);
  for (const model::KernelVariant& kernel : kernels) {
    std::vector<std::pair<model::KernelVariant, model::Schema>> served;
    for (const model::KernelVariant& variant : derived) {
      if (variant.path == kernel.path) served.push_back({variant, *schemas.find(variant.op)});
    }
    emitter.emit_kernel_binding(kernel, *schemas.find(kernel.op), served, writer);
    std::cout << "kernel " << kernel.op.display() << " " << kernel.name() << ": " << kernel.path;
    for (const auto& [variant, unused] : served) std::cout << " (also serves " << variant.op.display() << ")";
    std::cout << "\n";
  }
  emitter.emit_kernel_index(options.kernels, kernels, writer);
  report_written(writer);
  return 0;
}

}  // namespace

struct FactoOptions {
  std::vector<std::string> specs;  // *.spec files or folders of them
  std::string output;              // the trace file to write
  int cases_per_operator = 40;
  std::vector<std::string> ops;
};

// Reads every specification and checks it against the installed libtorch's schema before
// writing anything; writes the suite's trace file only when its text changed.
int run_facto(const FactoOptions& options) {
  const std::vector<std::string> files = expand_paths(options.specs, kSpecInputs);
  schema::TorchSchemaSource schemas;
  std::vector<facto::OperatorSpec> specs;
  std::map<std::string, std::string> defined_in;
  std::vector<std::string> sources;
  for (const std::string& file : files) {
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (facto::OperatorSpec& spec : facto::parse_specs(file, text)) {
      const std::optional<model::OperatorName> name = model::OperatorName::from_trace(spec.op);
      const std::optional<model::Schema> schema = name ? schemas.find(*name) : std::nullopt;
      if (!schema) {
        throw DiagnosticError({file, spec.where.line, spec.where.column, spec.op + " is not an operator of this libtorch",
                               "an overload the installed torch has (python -c 'import torch; print(torch.ops.aten.<name>)')"});
      }
      if (auto [earlier, inserted] = defined_in.emplace(spec.op, file); !inserted) {
        throw DiagnosticError({file, spec.where.line, spec.where.column, spec.op + " is also specified in " + earlier->second,
                               "one entry per operator overload"});
      }
      facto::check_against_schema(spec, schema->text);
      bool selected = options.ops.empty();
      for (const std::string& filter : options.ops) selected = selected || model::matches_filter(*name, filter);
      if (selected) specs.push_back(std::move(spec));
    }
    sources.push_back(fs::path(file).filename().string());
  }
  const std::string text = facto::suite_text(specs, static_cast<size_t>(options.cases_per_operator), sources);
  const fs::path output(options.output);
  emit::OutputWriter writer(output.parent_path().empty() ? "." : output.parent_path().string());
  const bool changed = writer.write(output.filename().string(), text);
  size_t cases = 0;
  for (size_t at = text.find("\ncnt: "); at != std::string::npos; at = text.find("\ncnt: ", at + 1)) ++cases;
  std::cout << (changed ? "wrote " : "unchanged: ") << options.output << ": " << specs.size() << " operators, " << cases
            << " cases (at most " << options.cases_per_operator << " an operator)\n";
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"backendbench-gen: turns operator traces into GoogleTest and Google Benchmark sources"};
  app.require_subcommand(1);

  std::vector<std::string> check_paths;
  auto* check = app.add_subcommand("check", "parse trace files and folders; print counts or errors");
  check->add_option("paths", check_paths, "trace files (.txt, .json, .jsonl) or folders of them")->required();

  GenerateOptions options;
  auto* suite = app.add_subcommand("suite", "write one suite's case tables, tests and CTest entries");
  suite->add_option("--name", options.suite, "suite name, e.g. smoke")->required();
  suite->add_option("--traces", options.traces, "trace files or folders of *.txt traces")->required();
  suite->add_option("--output", options.output, "folder for the suite's generated files")->required();
  suite->add_option("--templates", options.templates, "the templates/ folder")->required();
  suite->add_option("--kernels", options.kernels, "the generated_kernels/ folder");
  suite->add_flag("--skip-cuda", options.skip_cuda, "leave out .cu kernels (no CUDA toolchain)");
  suite->add_flag("--skip-python", options.skip_python, "leave out .py kernels (no embeddable Python)");
  suite->add_option("--op-library", options.op_libraries,
                    "NAME=LISTING: a Python op library's operators (python -m backendbench.op_libraries --list NAME)");
  suite->add_option("--shards", options.shards, "split the sources into N files (parallel builds)");
  suite->add_option("--ops", options.ops,
                    "operators: exact overloads (add.Tensor) or base names (add = every add.* overload)")
      ->delimiter(',');
  suite->add_option("--top-n", options.top_n, "keep the N largest inputs per operator (0: all)");
  suite->add_option("--bottom-n", options.bottom_n, "keep the N smallest inputs per operator (with --top-n: both)");
  suite->add_flag("--include-synthetic", options.include_synthetic, "include cnt: 0 inputs");
  suite->add_flag("--overhead-dominated-only", options.overhead_dominated_only,
                  "keep only inputs a dataset marks is_overhead_dominated_op (BackendBench's --check-overhead-dominated-ops)");
  suite->add_flag("--exclude-unknown-operators", options.exclude_unknown,
                  "exclude (with a reason) operators this libtorch lacks, instead of failing");
  suite->add_option("--test-executable", options.test_executable, "the suite's test executable")->required();
  suite->add_option("--results-dir", options.results_dir, "where tests write gtest XML")->required();
  suite->add_option("--timeout", options.timeout, "CTest timeout per entry, seconds");
  suite->add_option("--case-timeout", options.case_timeout, "timeout per case inside the test executable, seconds (0: none)");
  suite->add_option("--cases-per-entry", options.cases_per_entry,
                    "split an operator with more cases into CTest entries of at most this many (0: never)")
      ->check(CLI::NonNegativeNumber);
  suite->add_option("--test-labels", options.test_labels, "CTest labels every entry gets besides its own (a test tier: unit, system, e2e)")
      ->delimiter(',');
  suite->add_option("--cmake-command", options.cmake_command, "cmake, for entries of kernels that must fail");
  suite->add_option("--expect-script", options.expect_script, "cmake/ExpectCommand.cmake, for entries of kernels that must fail");

  auto* kernels = app.add_subcommand("kernels", "write one binding per kernel in the kernels folder");
  kernels->add_option("--kernels", options.kernels, "the generated_kernels/ folder")->required();
  kernels->add_option("--output", options.output, "folder for the bindings")->required();
  kernels->add_option("--templates", options.templates, "the templates/ folder")->required();
  kernels->add_flag("--skip-cuda", options.skip_cuda, "leave out .cu kernels (no CUDA toolchain)");
  kernels->add_flag("--skip-python", options.skip_python, "leave out .py kernels (no embeddable Python)");

  FactoOptions facto_options;
  auto* facto_command = app.add_subcommand("facto", "expand FACTO specifications into the facto suite's trace file");
  facto_command->add_option("--specs", facto_options.specs, "*.spec files or folders of them (generator/facto/specs)")
      ->required();
  facto_command->add_option("--output", facto_options.output, "the trace file to write")->required();
  facto_command->add_option("--cases-per-operator", facto_options.cases_per_operator, "at most this many cases an operator")
      ->check(CLI::PositiveNumber);
  facto_command->add_option("--ops", facto_options.ops, "operators: exact overloads (add.Tensor) or base names (add)")
      ->delimiter(',');

  CLI11_PARSE(app, argc, argv);
  try {
    if (check->parsed()) return run_check(check_paths);
    if (facto_command->parsed()) return run_facto(facto_options);
    if (suite->parsed()) return run_suite(options);
    return run_kernels(options);
  } catch (const DiagnosticError& error) {
    std::cerr << error.what() << "\n";
    return 1;
  }
}
