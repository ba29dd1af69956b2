// Building and checking one candidate alone; see candidate_bench.h.
#include "agents/candidate_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "backendbench/files.h"
#include "backendbench/job_verdicts.h"
#include "backendbench/sandbox.h"
#include "backendbench/settings.h"
#include "backendbench/spare_policy.h"
#include "language/diagnostic.h"
#include "planner/process.h"
#include "planner/text.h"
#include "emit/emitter.h"
#include "language/naming.h"
#include "model/model.h"
#include "schema/torch_schema.h"

namespace backendbench::agents {

using planner::process_output;
using planner::ProcessOptions;
using planner::run_process;
using planner::tail_of_file;

namespace {

using Clock = std::chrono::steady_clock;

using planner::seconds_since;

using planner::read_text;
using planner::shell_quoted;

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

// A shell command line as words (the slots' commands quote nothing that holds a path).
std::vector<std::string> words_of(const std::string& command) {
  std::istringstream stream(command);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

// A hash as 16 hex digits: a kept binding's file name.
std::string hex_of(size_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016zx", value);
  return text;
}

// What a slot holds between runs (as backendbench_add_candidate_slots writes it).
constexpr const char* kEmptySlot = "// A candidate slot of the llm backends: the loop writes a candidate's binding #include here.\n";

// Schemas (the dispatcher) and the emitter are shared by every worker thread: one at a time.
std::mutex& generation_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

CandidateBench::CandidateBench(CandidateBenchOptions options) : options_(std::move(options)) {
  if (options_.attempts_root.empty()) throw std::invalid_argument("CandidateBench needs the attempts' root folder");
  options_.attempts_root = std::filesystem::absolute(options_.attempts_root).lexically_normal().string();
  files::make_directories(options_.attempts_root);
  // Python benches only, by the served executables' own rule for early spares, from the same
  // setting (the environment they inherit) and the same cores. A C++ or CUDA spare starts in
  // about a second, within one interval: there (two-part CUDA at 4 on an H200) a server kept
  // ahead left the throughput as it was and the check median 0.44-0.49 s against 0.29-0.30 s.
  int argc = 1;
  char name[] = "backendbench";
  char* argv[] = {name, nullptr};
  const Settings settings = parse_settings(Frontend::kTests, argc, argv, [](const char* variable) -> const char* {
    return std::string(variable) == "BACKENDBENCH_EARLY_SPARE" ? std::getenv(variable) : nullptr;
  });
  many_cores_ = replaces_spare_at_once_here(settings);
}

void CandidateBench::prepare(const std::string& log_path) {
  slots_.clear();
  if (!options_.timed_suites.empty() && !timing_server_) {
    // Its spare worker starts libtorch and CUDA while the slots and the first candidates build.
    timing_server_ = new_timing_server();
    timing_server_->start_ahead();
  }
  if (many_cores_) {
    // With 8 candidates at once, the first round's 16 served executables (two suites) once
    // started with their checks, each starting libtorch and CUDA beside 8 builds: their first
    // checks took up to 12 s. Started here, they start while the slots build.
    std::lock_guard<std::mutex> lock(servers_mutex_);
    for (const std::string& suite : options_.checked_suites) {
      std::vector<std::unique_ptr<planner::JobServer>>& idle = idle_servers_[suite];
      while (idle.size() < static_cast<size_t>(options_.slots)) {
        idle.push_back(new_server(suite));
        idle.back()->start_ahead();
      }
    }
  }
  if (options_.language == KernelLanguage::kPython) return;  // nothing to build
  const std::string language = options_.language == KernelLanguage::kCuda ? "cu" : "cpp";
  std::vector<std::string> targets;
  const auto slot_sources = [&](int slot) {
    const std::string stem = options_.tree.build() + "/candidate_slots/slot_" + std::to_string(slot);
    SlotCommands commands;
    commands.source = stem + (language == "cu" ? ".host.cpp" : ".cpp");
    commands.binding_source = stem + (language == "cu" ? ".host.binding.cpp" : ".binding.cpp");
    if (language == "cu") commands.cuda_source = stem + ".cu";
    return commands;
  };
  for (int slot = 0; slot < options_.slots; ++slot) {
    targets.push_back("backendbench_candidate_" + language + "_" + std::to_string(slot));
    // A slot still holding an earlier run's candidate includes a file that may be gone.
    const SlotCommands sources = slot_sources(slot);
    for (const std::string& source : {sources.source, sources.binding_source, sources.cuda_source}) {
      if (!source.empty() && read_text(source) != kEmptySlot) files::write_whole(source, kEmptySlot);
    }
  }
  options_.tree.build_targets(targets, 2, log_path);
  const std::string& build = options_.tree.build();
  const auto generator = options_.tree.cached("CMAKE_GENERATOR");
  const auto make_program = options_.tree.cached("CMAKE_MAKE_PROGRAM");
  const bool ninja = generator && generator->rfind("Ninja", 0) == 0 && make_program && !make_program->empty();
  for (int slot = 0; slot < options_.slots; ++slot) {
    SlotCommands commands = slot_sources(slot);
    commands.library = build + "/candidate_slots/libbackendbench_candidate_" + language + "_" + std::to_string(slot) + ".so";
    if (ninja) {
      // The build tool's own commands for this slot: compiling and linking it without the build
      // tool lets slots build in parallel (two build tool runs in one folder would race).
      std::istringstream lines(process_output({*make_program, "-C", build, "-t", "commands", targets[slot]}));
      // A custom command's line starts by entering the build folder, where the slot's script
      // already runs: left in, the folder would be a path the sandbox binds back (compile_inputs).
      const std::string enter_build = "cd " + build + " && ";
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind(enter_build, 0) == 0) line.erase(0, enter_build.size());
        if (line.find(targets[slot]) != std::string::npos) commands.commands.push_back(line);
      }
    }
    if (commands.commands.empty()) {
      commands.commands.push_back(std::string(BACKENDBENCH_CMAKE_COMMAND) + " --build " + shell_quoted(build) + " --target " + targets[slot]);
    }
    // The binding's compile: the command that names its source and writes an object.
    for (size_t i = 0; i + 1 < commands.commands.size(); ++i) {
      const std::vector<std::string> words = words_of(commands.commands[i]);
      const auto source = std::find(words.begin(), words.end(), commands.binding_source);
      const auto output = std::find(words.begin(), words.end(), "-o");
      if (source != words.end() && output != words.end() && output + 1 != words.end()) {
        commands.binding_command = static_cast<int>(i);
        commands.binding_object = *(output + 1);
        commands.binding_object_path =
            commands.binding_object.front() == '/' ? commands.binding_object : build + "/" + commands.binding_object;
      }
    }
    commands.language = language;
    slots_.push_back(commands);
  }
  files::make_directories(build + "/candidate_slots/bindings");
}

namespace {

// The folders a slot's build writes: those of every -o and -MF path of its commands (the object,
// its dependency file, the library); the whole build folder when the build tool runs instead.
std::vector<std::string> output_folders(const std::vector<std::string>& commands, const std::string& build) {
  std::set<std::string> folders;
  for (const std::string& command : commands) {
    for (const std::string& folder : build_command_outputs(words_of(command), build)) folders.insert(folder);
    if (command.find(" --build ") != std::string::npos) folders.insert(build);
  }
  return {folders.begin(), folders.end()};
}

// What a slot's build reads besides the candidate (sandbox.h), so that the project and the build
// folder can be hidden and only these bound back.
std::vector<std::string> compile_inputs(const std::vector<std::string>& commands) {
  std::set<std::string> inputs;
  for (const std::string& command : commands) {
    for (const std::string& input : build_command_inputs(words_of(command))) inputs.insert(input);
  }
  return {inputs.begin(), inputs.end()};
}

}  // namespace

bool CandidateBench::build_in_slot(int slot, const std::string& attempt, const CandidateFiles& candidate,
                                   const std::string& log_path) const {
  const SlotCommands& commands = slots_.at(slot);
  const auto include_of = [](const std::string& file) { return "#include \"" + file + "\"\n"; };
  if (commands.cuda_source.empty()) {
    files::write_whole(commands.source, include_of(candidate.own_part));
  } else if (candidate.device_part.empty()) {  // a classic .cu: its binding is CUDA
    files::write_whole(commands.cuda_source, include_of(candidate.own_part));
    files::write_whole(commands.source, kEmptySlot);
  } else {
    files::write_whole(commands.cuda_source, include_of(candidate.device_part));
    files::write_whole(commands.source, include_of(candidate.own_part));
  }
  // The binding names no candidate: one object per text (per operator) is kept and linked
  // into every later candidate of its operator, whatever the slot.
  const std::string binding_text = candidate.binding.empty() ? std::string(kEmptySlot) : read_text(candidate.binding);
  const std::string kept = options_.tree.build() + "/candidate_slots/bindings/" + commands.language + "_" +
                           hex_of(std::hash<std::string>{}(binding_text));
  // The link names the slot's binding object as the build tool does (relative to the build
  // folder, or absolute): the kept one takes its place there.
  std::string link = commands.commands.back() + " ";
  bool replaced = false;
  if (commands.binding_command >= 0) {
    for (const std::string& named : {commands.binding_object, std::filesystem::path(commands.binding_object_path)
                                                                   .lexically_relative(options_.tree.build())
                                                                   .string()}) {
      const std::string word = " " + named + " ";
      for (size_t at = link.find(word); at != std::string::npos; at = link.find(word, at + 1)) {
        link.replace(at, word.size(), " " + kept + ".o ");
        replaced = true;
      }
    }
  }
  link.pop_back();
  const bool reuse = replaced && std::filesystem::exists(kept + ".o") && read_text(kept + ".cpp") == binding_text;
  if (!reuse) {
    files::write_whole(commands.binding_source, candidate.binding.empty() ? std::string(kEmptySlot) : include_of(candidate.binding));
  }
  std::vector<std::string> to_run;
  for (size_t i = 0; i < commands.commands.size(); ++i) {
    if (!reuse) {
      to_run.push_back(commands.commands[i]);
    } else if (static_cast<int>(i) != commands.binding_command) {
      to_run.push_back(i + 1 == commands.commands.size() ? link : commands.commands[i]);
    }
  }
  // The slot's compiles (its own part and its binding; a CUDA slot's device part too) run at
  // once, then its link: the build tool's commands come in that order.
  std::string script = "cd " + shell_quoted(options_.tree.build());
  if (to_run.size() > 2) {
    script += " || exit 1; status=0";
    std::string waits;
    for (size_t i = 0; i + 1 < to_run.size(); ++i) {
      script += "; { " + to_run[i] + " ; } & pid" + std::to_string(i) + "=$!";
      waits += "; wait $pid" + std::to_string(i) + " || status=1";
    }
    script += waits + "; [ $status = 0 ] && " + to_run.back();
  } else {
    for (const std::string& command : to_run) script += " && " + command;
  }
  std::vector<std::string> argv = {"/bin/sh", "-c", script};
  if (options_.sandbox) {
    // The candidate's code is untrusted from its first byte: the compiler sees the toolchain,
    // what the slot's commands name and the candidate's own attempt; never $HOME, /tmp, the rest
    // of the project and the build folder (logs, earlier results, the run's files) or the
    // user's environment (the model's key), so an error it quotes can quote nothing secret.
    const std::optional<std::string> bubblewrap = bubblewrap_executable();
    if (!bubblewrap) {
      throw error_at("bwrap", "cannot sandbox the candidates' builds: bubblewrap is not installed",
                     "Debian's bubblewrap (scripts/install-deps.sh), or --no-sandbox to build them unsandboxed");
    }
    SandboxPolicy policy;
    policy.read_only.push_back(attempt);
    policy.writable = output_folders(to_run, options_.tree.build());
    const bool build_tool = std::any_of(to_run.begin(), to_run.end(),
                                        [](const std::string& command) { return command.find(" --build ") != std::string::npos; });
    if (build_tool) {
      // Another generator than Ninja: the build tool reads the whole build folder.
      policy.read_only = loaded_library_folders();
      for (const std::string& folder : {attempt, options_.tree.source(), options_.tree.build()}) policy.read_only.push_back(folder);
    } else {
      policy.hidden = {options_.tree.source(), options_.tree.build()};
      for (const std::string& input : compile_inputs(to_run)) policy.read_only.push_back(input);
    }
    policy.environment = sandbox_environment(SandboxPolicy::kScratch);
    argv = sandboxed_command(*bubblewrap, policy, argv);
  }
  ProcessOptions process;
  process.log_path = log_path;
  process.timeout_seconds = 600;  // a compiler stuck in a model's templates
  // Without the build tool's commands (another generator), the build tool builds one slot at a time.
  static std::mutex fallback_mutex;
  std::unique_lock<std::mutex> lock(fallback_mutex, std::defer_lock);
  if (to_run.size() == 1 && to_run[0].find(" --build ") != std::string::npos) lock.lock();
  const bool built = run_process(argv, process) == 0;
  if (!reuse && commands.binding_command >= 0) {
    // A failed build may still have compiled the binding (the candidate's own part failed): its
    // object is then newer than its source, written above (a failed compile leaves none).
    std::error_code error;
    const auto object_time = std::filesystem::last_write_time(commands.binding_object_path, error);
    const bool compiled =
        built || (!error && object_time >= std::filesystem::last_write_time(commands.binding_source, error) && !error);
    if (compiled) {
      // Written beside and renamed into place: another slot may keep the same binding at once.
      const std::string unique = "." + std::to_string(getpid()) + "_" + std::to_string(slot);
      files::write_whole(kept + ".cpp" + unique, binding_text);
      std::filesystem::copy_file(commands.binding_object_path, kept + ".o" + unique,
                                 std::filesystem::copy_options::overwrite_existing, error);
      if (!error) {
        std::filesystem::rename(kept + ".cpp" + unique, kept + ".cpp", error);
        if (!error) std::filesystem::rename(kept + ".o" + unique, kept + ".o", error);
      }
    }
  }
  return built;
}

CandidateResult CandidateBench::check(int slot, const std::string& attempt, const std::string& folder, int number, const std::string& code,
                                      const std::vector<SuiteCases>& cases, const std::map<std::string, std::string>& beside) const {
  CandidateResult result;
  const auto op = naming::OperatorName::from_folder(folder);
  if (!op) throw error_at(folder, "not an operator's kernel folder", "an operator folder such as relu__default");
  const std::string kernel_root = attempt + "/kernel";
  const std::string stem = naming::implementation_stem(folder, number);
  result.kernel_file = kernel_root + "/" + folder + "/" + stem + kernel_extension(options_.language);
  files::make_directories(kernel_root + "/" + folder);
  for (const auto& [path, text] : beside) {
    // Relative and downward only: nothing of a caller's lands outside the attempt's kernel folder.
    if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos) {
      throw error_at(path, "a file beside the kernel that is not a path inside its kernel folder",
                     "a relative path without '..', such as elementwise.h or relu/helpers.h");
    }
    files::make_directories(std::filesystem::path(kernel_root + "/" + path).parent_path().string());
    files::write_whole(kernel_root + "/" + path, text);
  }
  files::write_whole(result.kernel_file, code);

  // Build.
  const auto build_start = Clock::now();
  std::string manifest;
  if (options_.language == KernelLanguage::kPython) {
    manifest = "python " + result.kernel_file + "\n";
  } else {
    CandidateFiles generated;
    {
      std::lock_guard<std::mutex> lock(generation_mutex());
      static const schema::TorchSchemaSource schemas;
      const std::vector<model::KernelVariant> kernels = model::discover_kernels(kernel_root, schemas);
      if (kernels.size() != 1) throw error_at(kernel_root, "expected one kernel, found " + std::to_string(kernels.size()), "the candidate alone");
      const model::KernelVariant& kernel = kernels[0];
      const std::vector<model::KernelVariant> derived = model::derive_variants(kernels, schemas);
      std::vector<std::pair<model::KernelVariant, model::Schema>> served;
      for (const model::KernelVariant& variant : derived) served.push_back({variant, *schemas.find(variant.op)});
      emit::OutputWriter writer(attempt + "/binding");
      const emit::Emitter emitter(options_.templates_directory);
      const std::string folder_of_binding = attempt + "/binding/";
      if (kernel.is_cuda && !kernel.has_device_part) {
        // A classic .cu: its binding is CUDA, compiled with the kernel by nvcc.
        emitter.emit_kernel_binding(kernel, *schemas.find(kernel.op), served, writer);
        generated.own_part = folder_of_binding + emit::Emitter::kernel_binding_file(kernel);
      } else {
        emitter.emit_candidate_binding(kernel, *schemas.find(kernel.op), served, writer);
        generated.own_part = folder_of_binding + emit::Emitter::candidate_kernel_part_file(kernel);
        generated.binding = folder_of_binding + emit::Emitter::kernel_binding_file(kernel);
      }
      if (kernel.has_device_part) generated.device_part = folder_of_binding + emit::Emitter::kernel_device_part_file(kernel);
    }
    const std::string log = attempt + "/build.log";
    files::remove_tree(log);
    const bool built = build_in_slot(slot, attempt, generated, log);
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
  // One job per suite: the candidate's backend on the feedback cases, with the feedback salt.
  const auto job_of = [&](const SuiteCases& suite, Job::Mode mode) {
    Job job{suite.suite, op->display(), backend, mode, suite.cases};
    job.salt = options_.salt;
    job.case_timeout_seconds = options_.case_timeout_seconds;
    if (!options_.device.empty()) job.device = options_.device;
    return job;
  };
  std::vector<std::thread> runs;
  for (const SuiteCases& suite : cases) {
    if (suite.cases.empty()) continue;
    runs.emplace_back([&, suite] {
      planner::JobServer::Request request;
      request.job = attempt + "/" + suite.suite + ".job.jsonl";
      files::write_whole(request.job, job_json(job_of(suite, Job::Mode::kCheck)) + "\n");
      request.log = attempt + "/" + suite.suite + ".log";
      files::remove_tree(request.log);
      request.verdicts = attempt + "/" + suite.suite + ".verdicts.jsonl";
      files::remove_tree(request.verdicts);
      request.kernel_manifest = attempt + "/manifest.txt";
      // Each case has its own timeout inside; this one catches a hang outside any case (a kernel
      // library that never finishes loading).
      const double timeout = 60.0 + static_cast<double>(options_.case_timeout_seconds) * static_cast<double>(suite.cases.size());
      std::unique_ptr<planner::JobServer> server = take_server(suite.suite);
      const std::string failure = server->run(request, timeout);
      // Why a request did not run reaches the feedback through the log's tail (job_verdicts).
      if (!failure.empty()) std::ofstream(request.log, std::ios::app) << "backendbench: " << failure << "\n";
      give_back(suite.suite, std::move(server));
    });
  }
  for (std::thread& run : runs) run.join();
  for (const SuiteCases& suite : cases) {
    if (suite.cases.empty()) continue;
    // A line its supervisor did not finish: the cases without a verdict fail below.
    const std::vector<Verdict> written = read_verdicts(attempt + "/" + suite.suite + ".verdicts.jsonl").verdicts;
    std::string tail = tail_of_file(attempt + "/" + suite.suite + ".log", 6);
    replace_all(tail, kernel_root + "/", "");
    for (Verdict& verdict : job_verdicts(job_of(suite, Job::Mode::kCheck), suite.cases, written,
                                         "no verdict; the test process ended first:\n" + tail)) {
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

std::unique_ptr<planner::JobServer> CandidateBench::take_server(const std::string& suite) const {
  std::lock_guard<std::mutex> lock(servers_mutex_);
  std::vector<std::unique_ptr<planner::JobServer>>& idle = idle_servers_[suite];
  std::unique_ptr<planner::JobServer> taken;
  if (!idle.empty()) {
    // The one idle longest: its spare worker has had the most time to start libtorch (and
    // Python); the one just given back is still starting its own.
    taken = std::move(idle.front());
    idle.erase(idle.begin());
  } else {
    taken = new_server(suite);
  }
  if (options_.language == KernelLanguage::kPython && many_cores_ && idle.empty()) {
    idle.push_back(new_server(suite));
    idle.back()->start_ahead();
  }
  return taken;
}

std::unique_ptr<planner::JobServer> CandidateBench::served(const std::string& executable, const std::string& log) const {
  return std::make_unique<planner::JobServer>(
      std::vector<std::string>{executable, "--backendbench_serve=" + options_.attempts_root,
                               std::string("--backendbench_sandbox=") + (options_.sandbox ? "bwrap" : "none"),
                               // Its first spare ready for this bench's language (later ones follow the last request).
                               std::string("--backendbench_first_spare=") + (options_.language == KernelLanguage::kPython ? "python" : "cpp")},
      log);
}

std::unique_ptr<planner::JobServer> CandidateBench::new_server(const std::string& suite) const {
  return served(options_.tree.test_executable(suite),
                options_.attempts_root + "/job_server_" + suite + "_" + std::to_string(++servers_started_) + ".log");
}

std::unique_ptr<planner::JobServer> CandidateBench::new_timing_server() const {
  return served(options_.tree.bench_executable(), options_.attempts_root + "/job_server_bench.log");
}

void CandidateBench::give_back(const std::string& suite, std::unique_ptr<planner::JobServer> server) const {
  std::lock_guard<std::mutex> lock(servers_mutex_);
  idle_servers_[suite].push_back(std::move(server));
}

void CandidateBench::time(const std::string& attempt, const std::string& op, const std::string& backend,
                          const std::vector<SuiteCases>& cases, CandidateResult& result) const {
  std::string jobs;
  size_t timed = 0;
  for (const SuiteCases& suite : cases) {
    if (!options_.timed_suites.count(suite.suite) || suite.cases.empty()) continue;
    Job job{suite.suite, op, backend, Job::Mode::kTime, suite.cases};
    job.salt = options_.salt;
    if (!options_.device.empty()) job.device = options_.device;
    jobs += job_json(job) + "\n";
    timed += suite.cases.size();
  }
  if (jobs.empty()) return;
  std::lock_guard<std::mutex> one_at_a_time(timing_mutex_);
  const auto start = Clock::now();
  planner::JobServer::Request request;
  request.job = attempt + "/bench.job.jsonl";
  files::write_whole(request.job, jobs);
  request.verdicts = attempt + "/bench.verdicts.jsonl";
  files::remove_tree(request.verdicts);
  request.log = attempt + "/bench.log";
  files::remove_tree(request.log);
  request.kernel_manifest = attempt + "/manifest.txt";
  if (!timing_server_) timing_server_ = new_timing_server();
  const std::string failure = timing_server_->run(request, 120.0 + 30.0 * static_cast<double>(timed / 8 + 1));
  // Without verdicts the candidate has no speedup; why, for whoever reads the attempt's folder.
  if (!failure.empty()) std::ofstream(request.log, std::ios::app) << "backendbench: " << failure << "\n";
  double log_sum = 0;
  std::ifstream in(request.verdicts);
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

}  // namespace backendbench::agents
