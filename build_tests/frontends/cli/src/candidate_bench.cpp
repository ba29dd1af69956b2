// Building and checking one candidate alone; see candidate_bench.h.
#include "cli/candidate_bench.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "backendbench/files.h"
#include "cli/errors.h"
#include "cli/process.h"
#include "emit/emitter.h"
#include "language/diagnostic.h"
#include "language/naming.h"
#include "model/model.h"
#include "schema/torch_schema.h"

namespace backendbench::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
}

// The compiler's first error lines, paths relative to the kernel folder (stable between runs, so a
// replayed run asks the same questions).
std::vector<std::string> first_errors(const std::string& log, const std::string& kernel_root) {
  std::string text = read_text(log);
  replace_all(text, kernel_root + "/", "");
  std::vector<std::string> lines;
  std::istringstream in(text);
  bool seen_error = false;
  for (std::string line; std::getline(in, line) && lines.size() < 40;) {
    seen_error = seen_error || line.find("error") != std::string::npos;
    if (seen_error) lines.push_back(line);
  }
  if (lines.empty()) {
    std::istringstream again(text);
    for (std::string line; std::getline(again, line) && lines.size() < 40;) lines.push_back(line);
  }
  return lines;
}

// What a slot holds between runs (as backendbench_add_candidate_slots writes it).
constexpr const char* kEmptySlot = "// A candidate slot of the llm backends: the loop writes a candidate's binding #include here.\n";

// Schemas (the dispatcher) and the emitter are shared by every worker thread: one at a time.
std::mutex& generation_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

CandidateBench::CandidateBench(CandidateBenchOptions options) : options_(std::move(options)) {}

void CandidateBench::prepare(const std::string& log_path) {
  slots_.clear();
  if (options_.language == KernelLanguage::kPython) return;  // nothing to build
  const std::string language = options_.language == KernelLanguage::kCuda ? "cu" : "cpp";
  std::vector<std::string> targets;
  for (int slot = 0; slot < options_.slots; ++slot) {
    targets.push_back("backendbench_candidate_" + language + "_" + std::to_string(slot));
    // A slot still holding an earlier run's candidate includes a file that may be gone.
    const std::string source = options_.tree.build() + "/candidate_slots/slot_" + std::to_string(slot) + "." + language;
    if (read_text(source) != kEmptySlot) files::write_whole(source, kEmptySlot);
  }
  options_.tree.build_targets(targets, 2, log_path);
  const std::string& build = options_.tree.build();
  const auto generator = options_.tree.cached("CMAKE_GENERATOR");
  const auto make_program = options_.tree.cached("CMAKE_MAKE_PROGRAM");
  const bool ninja = generator && generator->rfind("Ninja", 0) == 0 && make_program && !make_program->empty();
  for (int slot = 0; slot < options_.slots; ++slot) {
    SlotCommands commands;
    commands.source = build + "/candidate_slots/slot_" + std::to_string(slot) + "." + language;
    commands.library = build + "/candidate_slots/libbackendbench_candidate_" + language + "_" + std::to_string(slot) + ".so";
    if (ninja) {
      // The build tool's own commands for this slot: compiling and linking it without the build
      // tool lets slots build in parallel (two build tool runs in one folder would race).
      std::istringstream lines(process_output({*make_program, "-C", build, "-t", "commands", targets[slot]}));
      for (std::string line; std::getline(lines, line);) {
        if (line.find(targets[slot]) != std::string::npos) commands.commands.push_back(line);
      }
    }
    if (commands.commands.empty()) {
      commands.commands.push_back(std::string(BACKENDBENCH_CMAKE_COMMAND) + " --build " + shell_quoted(build) + " --target " + targets[slot]);
    }
    slots_.push_back(commands);
  }
}

bool CandidateBench::build_in_slot(int slot, const std::string& binding, const std::string& log_path) const {
  const SlotCommands& commands = slots_.at(slot);
  files::write_whole(commands.source, "#include \"" + binding + "\"\n");
  std::string script = "cd " + shell_quoted(options_.tree.build());
  for (const std::string& command : commands.commands) script += " && " + command;
  ProcessOptions process;
  process.log_path = log_path;
  process.timeout_seconds = 600;  // a compiler stuck in a model's templates
  // Without the build tool's commands (another generator), the build tool builds one slot at a time.
  static std::mutex fallback_mutex;
  std::unique_lock<std::mutex> lock(fallback_mutex, std::defer_lock);
  if (commands.commands.size() == 1 && commands.commands[0].find(" --build ") != std::string::npos) lock.lock();
  return run_process({"/bin/sh", "-c", script}, process) == 0;
}

CandidateResult CandidateBench::check(int slot, const std::string& attempt, const std::string& folder, int number, const std::string& code,
                                      const std::vector<SuiteCases>& cases) const {
  CandidateResult result;
  const auto op = naming::OperatorName::from_folder(folder);
  if (!op) throw CliError(folder, "not an operator's kernel folder", "an operator folder such as relu__default");
  const std::string kernel_root = attempt + "/kernel";
  const std::string stem = naming::implementation_stem(folder, number);
  result.kernel_file = kernel_root + "/" + folder + "/" + stem + kernel_extension(options_.language);
  files::make_directories(kernel_root + "/" + folder);
  files::write_whole(result.kernel_file, code);

  // Build.
  const auto build_start = Clock::now();
  std::string manifest;
  if (options_.language == KernelLanguage::kPython) {
    manifest = "python " + result.kernel_file + "\n";
  } else {
    std::string binding;
    {
      std::lock_guard<std::mutex> lock(generation_mutex());
      static const schema::TorchSchemaSource schemas;
      const std::vector<model::KernelVariant> kernels = model::discover_kernels(kernel_root, schemas);
      if (kernels.size() != 1) throw CliError(kernel_root, "expected one kernel, found " + std::to_string(kernels.size()), "the candidate alone");
      const std::vector<model::KernelVariant> derived = model::derive_variants(kernels, schemas);
      std::vector<std::pair<model::KernelVariant, model::Schema>> served;
      for (const model::KernelVariant& variant : derived) served.push_back({variant, *schemas.find(variant.op)});
      emit::OutputWriter writer(attempt + "/binding");
      emit::Emitter(options_.templates_directory).emit_kernel_binding(kernels[0], *schemas.find(kernels[0].op), served, writer);
      binding = attempt + "/binding/" + emit::Emitter::kernel_binding_file(kernels[0]);
    }
    const std::string log = attempt + "/build.log";
    files::remove_tree(log);
    const bool built = build_in_slot(slot, binding, log);
    result.build_seconds = seconds_since(build_start);
    if (!built) {
      result.stage = CandidateResult::Stage::kBuildFailed;
      result.build_errors = first_errors(log, kernel_root);
      return result;
    }
    const std::string library = attempt + "/" + stem + ".so";
    files::write_whole(library, read_text(slots_.at(slot).library));
    manifest = library + "\n";
  }
  result.build_seconds = seconds_since(build_start);
  files::write_whole(attempt + "/manifest.txt", manifest);

  // Check: each suite's test executable on its feedback cases, the suites in parallel.
  const auto check_start = Clock::now();
  const std::string backend = naming::variant_name(number);
  std::vector<std::thread> runs;
  for (const SuiteCases& suite : cases) {
    if (suite.cases.empty()) continue;
    runs.emplace_back([&, suite] {
      std::string filter;
      const std::string all = naming::gtest_filter(suite.suite, *op, backend);  // <suite>/<folder>.impl<N>/*
      for (const std::string& name : suite.cases) filter += (filter.empty() ? "" : ":") + all.substr(0, all.size() - 1) + name;
      ProcessOptions process;
      process.log_path = attempt + "/" + suite.suite + ".log";
      files::remove_tree(process.log_path);
      const std::string verdicts = attempt + "/" + suite.suite + ".verdicts.jsonl";
      files::remove_tree(verdicts);
      if (!options_.device.empty()) process.environment["BACKENDBENCH_DEVICE"] = options_.device;
      // Each case has its own timeout inside; this one catches a hang outside any case (a kernel
      // library that never finishes loading).
      process.timeout_seconds = 60.0 + static_cast<double>(options_.case_timeout_seconds) * static_cast<double>(suite.cases.size());
      run_process({options_.tree.test_executable(suite.suite), "--gtest_filter=" + filter, "--backendbench_verdicts=" + verdicts,
                   "--backendbench_salt=" + std::to_string(options_.salt), "--case-timeout=" + std::to_string(options_.case_timeout_seconds),
                   "--backendbench_kernel_manifest=" + attempt + "/manifest.txt"},
                  process);
    });
  }
  for (std::thread& run : runs) run.join();
  for (const SuiteCases& suite : cases) {
    if (suite.cases.empty()) continue;
    const std::string path = attempt + "/" + suite.suite + ".verdicts.jsonl";
    std::map<std::string, Verdict> by_case;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      try {
        Verdict verdict = verdict_from_json(line);
        by_case[verdict.case_name] = std::move(verdict);
      } catch (const std::exception&) {
      }
    }
    for (const std::string& name : suite.cases) {
      auto found = by_case.find(name);
      Verdict verdict;
      if (found != by_case.end()) {
        verdict = std::move(found->second);
      } else {
        // The process ended before this case's verdict: a crash or a timeout, named in its log.
        verdict.suite = suite.suite;
        verdict.op = op->display();
        verdict.case_name = name;
        verdict.backend = backend;
        verdict.status = Verdict::Status::kFailed;
        std::string tail = tail_of_file(attempt + "/" + suite.suite + ".log", 6);
        replace_all(tail, kernel_root + "/", "");
        verdict.errors.push_back(op->display() + " case " + name + ": no verdict; the test process ended first:\n" + tail);
      }
      if (verdict.status == Verdict::Status::kPassed) ++result.passed;
      if (verdict.status == Verdict::Status::kFailed) ++result.failed;
      if (verdict.status == Verdict::Status::kSkipped) ++result.skipped;
      result.verdicts.push_back(std::move(verdict));
    }
  }
  result.check_seconds = seconds_since(check_start);
  result.stage = CandidateResult::Stage::kChecked;
  if (result.correct() && !options_.timed_suites.empty()) time(attempt, op->display(), backend, cases, result);
  return result;
}

void CandidateBench::time(const std::string& attempt, const std::string& op, const std::string& backend,
                          const std::vector<SuiteCases>& cases, CandidateResult& result) const {
  auto escaped = [](const std::string& text) {
    std::string out;
    for (char c : text) out += std::string(std::strchr(".^$|()[]{}*+?\\", c) != nullptr && c != '\0' ? "\\" : "") + c;
    return out;
  };
  std::string names;
  for (const SuiteCases& suite : cases) {
    if (!options_.timed_suites.count(suite.suite)) continue;
    for (const std::string& name : suite.cases) names += (names.empty() ? "" : "|") + escaped(suite.suite + "/" + op + "/" + name + "/" + backend);
  }
  if (names.empty()) return;
  const auto start = Clock::now();
  const std::string verdicts = attempt + "/bench.verdicts.jsonl";
  files::remove_tree(verdicts);
  ProcessOptions process;
  process.log_path = attempt + "/bench.log";
  files::remove_tree(process.log_path);
  if (!options_.device.empty()) process.environment["BACKENDBENCH_DEVICE"] = options_.device;
  process.timeout_seconds = 120.0 + 30.0 * static_cast<double>(names.size() / 8 + 1);
  // Google Benchmark appends /iterations:1/manual_time to each name.
  run_process({options_.tree.bench_executable(), "--benchmark_filter=^(" + names + ")(/.*)?$", "--backendbench_verdicts=" + verdicts,
               "--backendbench_salt=" + std::to_string(options_.salt), "--backendbench_kernel_manifest=" + attempt + "/manifest.txt"},
              process);
  double log_sum = 0;
  std::ifstream in(verdicts);
  for (std::string line; std::getline(in, line);) {
    try {
      const Verdict verdict = verdict_from_json(line);
      if (verdict.passed() && verdict.timing && verdict.timing->speedup > 0) {
        log_sum += std::log(verdict.timing->speedup);
        ++result.timed_cases;
      }
    } catch (const std::exception&) {
    }
  }
  if (result.timed_cases > 0) result.speedup = std::exp(log_sum / result.timed_cases);
  result.time_seconds = seconds_since(start);
}

}  // namespace backendbench::cli
