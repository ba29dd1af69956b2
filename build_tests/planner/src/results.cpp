// The results folder's writers and the scores printed at the end of a run (results.h).
#include "planner/results.h"

#include <sys/utsname.h>
#include <unistd.h>

#if __has_include(<torch/headeronly/version.h>)
#include <torch/headeronly/version.h>
#else
#include <torch/version.h>
#endif

#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>

#include "backendbench/files.h"
#include "backendbench/json_numbers.h"
#include "backendbench/settings.h"
#include "language/json_text.h"
#include "planner/run_scores.h"
#include "language/diagnostic.h"
#include "planner/console_table.h"
#include "planner/findings.h"
#include "planner/process.h"
#include "planner/report.h"
#include "planner/text.h"

namespace backendbench::planner {

using files::write_whole;
namespace {

std::string figure(const char* format, double value) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace

nlohmann::json versions(const BuildTree& tree) {
  nlohmann::json info = {{"torch", TORCH_VERSION}, {"cxx_compiler", BACKENDBENCH_CXX_COMPILER}};
  const long cudart = cuda_runtime_version();
  info["cuda_runtime"] = cudart ? std::to_string(cudart / 1000) + "." + std::to_string(cudart % 1000 / 10) : "";
  info["cuda_compiler"] = BACKENDBENCH_CUDA_COMPILER;  // "" where .cu kernels are not built
  std::string gpu = process_output({"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"});
  while (!gpu.empty() && (gpu.back() == '\n' || gpu.back() == ' ')) gpu.pop_back();
  info["gpu"] = gpu;
  std::string commit = process_output({"git", "-C", tree.source(), "rev-parse", "HEAD"});
  if (!commit.empty()) commit.pop_back();
  if (!commit.empty() && !process_output({"git", "-C", tree.source(), "status", "--porcelain", "--untracked-files=no"}).empty()) {
    commit += "+uncommitted changes";
  }
  info["backendbench_commit"] = commit.empty() ? "unknown (not a git checkout)" : commit;
  utsname system{};
  uname(&system);
  info["os"] = std::string(system.sysname) + " " + system.release + " " + system.machine;
  return info;
}

std::string now_text(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof(text), format, &local);
  return text;
}

std::string working_directory() {
  char buffer[PATH_MAX];
  return getcwd(buffer, sizeof(buffer)) ? std::string(buffer) : std::string();
}

void print_scores(const std::vector<Verdict>& verdicts, const nlohmann::json& run) {
  const double p = run.value("p", 1.0);
  std::cout << "\nscores (BackendBench's definitions: a row is one operator and kernel; a failed performance test counts as 1.0)\n";
  // A backend is a short name in the table, and the folder it names once below it.
  std::vector<std::vector<std::string>> score_rows;
  std::vector<std::string> named_paths;
  for (const nlohmann::json& group : group_scores(verdicts, run, p)) {
    auto value = [&](const char* key, const char* format) {
      return group[key].is_null() ? std::string("not timed") : figure(format, number_from_json(group[key]));
    };
    const std::string label = group["label"].get<std::string>(), name = short_backend_name(label);
    if (name != label) named_paths.push_back(name + ": " + label);
    score_rows.push_back({name, std::to_string(group["operators"].get<int>()), value("correctness", "%.2f"),
                          value("performance", "%.3fx"), value("perf_at_p", "%.2f")});
  }
  std::cout << table_text({{"backend"}, {"operators", true}, {"correctness", true}, {"performance", true},
                           {"perf@" + figure("%g", p), true}},
                          score_rows);
  for (const std::string& named : named_paths) std::cout << "  " << named << "\n";
  std::cout << "\nper operator\n";
  std::vector<std::vector<std::string>> operator_rows;
  for (const OperatorResult& row : operator_results(verdicts)) {
    operator_rows.push_back({row.op, short_backend_name(row.backend), row.correct() ? "yes" : "NO",
                             std::to_string(row.correctness_tests), std::to_string(row.correctness_tests - row.passed_correctness),
                             std::to_string(row.performance_tests), row.performance_tests ? figure("%.3fx", row.geomean_speedup()) : "-"});
  }
  std::cout << table_text({{"operator"}, {"backend"}, {"correct", true}, {"tests", true}, {"failed", true}, {"timed", true},
                           {"speedup", true}},
                          operator_rows);
  std::map<std::string, int> skipped;
  for (const Verdict& verdict : verdicts) {
    if (verdict.status == Verdict::Status::kSkipped) ++skipped[verdict.backend + ": " + verdict.skip_reason];
  }
  if (!skipped.empty()) std::cout << "\nskipped tests (not counted):\n";
  for (const auto& [reason, count] : skipped) std::cout << "  " << count << " × " << reason << "\n";
  int shown = 0, failed = 0;
  for (const Verdict& verdict : verdicts) failed += verdict.status == Verdict::Status::kFailed;
  if (failed) std::cout << "\n" << failed << " failed tests (all in failed_tests.json and report.html); the first:\n";
  for (const Verdict& verdict : verdicts) {
    if (verdict.status != Verdict::Status::kFailed || shown++ >= 10) continue;
    // What went wrong first; the case after it, named once (its full text is in the files above).
    std::string message = first_failure_reason(verdict);
    if (message.size() > 300) message = message.substr(0, 300) + "...";
    std::cout << "  [" << verdict.suite << " " << verdict.backend << (is_performance_test(verdict) ? " timing" : "") << "] "
              << verdict.op << " " << verdict.case_name << ": " << message << "\n";
  }
  const Findings findings = run_findings(verdicts, run);
  int wrong = 0;
  for (const KernelFinding& kernel : findings.kernels) {
    if (!kernel.wrong() || kernel.reproduce.empty()) continue;
    if (wrong++ == 0) std::cout << "\nto run a wrong kernel's first failed case again (its salt, its case):\n";
    if (wrong > 10) continue;
    std::cout << "  " << kernel.op << " " << kernel.backend << (kernel.kernel_file.empty() ? "" : " (" + kernel.kernel_file + ")")
              << ", " << kernel.failed << " of " << kernel.tests << " failed:\n    " << kernel.reproduce << "\n";
  }
  if (wrong > 10) std::cout << "  and " << wrong - 10 << " more wrong kernels (report.html lists each with its command)\n";
}

nlohmann::json holdout_of(const std::vector<Verdict>& verdicts, const std::string& op) {
  int passed = 0, failed = 0, skipped = 0;
  std::vector<double> speedups;
  for (const Verdict& verdict : verdicts) {
    // The kept kernel is the run's only kernel folder: its backends are impl<N> (aten and op
    // libraries are named otherwise).
    if (verdict.op != op || verdict.backend.rfind("impl", 0) != 0) continue;
    if (verdict.frontend == "bench") {
      if (verdict.passed() && verdict.timing) speedups.push_back(verdict.timing->speedup);
      continue;
    }
    if (verdict.status == Verdict::Status::kPassed) ++passed;
    if (verdict.status == Verdict::Status::kFailed) ++failed;
    if (verdict.status == Verdict::Status::kSkipped) ++skipped;
  }
  double log_sum = 0;
  for (double speedup : speedups) log_sum += std::log(speedup);
  return {{"passed", passed}, {"failed", failed}, {"skipped", skipped},
          {"speedup", speedups.empty() ? nlohmann::json() : nlohmann::json(std::exp(log_sum / speedups.size()))}};
}

void print_generation(const nlohmann::json& generation) {
  std::cout << "\n" << generation.value("backend", "") << " (" << generation.value("client", "") << "):\n";
  for (const nlohmann::json& op : generation["operators"]) {
    const nlohmann::json& holdout = op["holdout"];
    const int passed = holdout.value("passed", 0), failed = holdout.value("failed", 0);
    const bool feedback_ok = op.value("correct_on_feedback", false);
    std::string verdict = failed == 0 && passed > 0 ? "hold-out passed" : "hold-out failed";
    if (feedback_ok && failed > 0) verdict = "caught by the hold-out (correct on the feedback cases only)";
    std::cout << "  " << op.value("operator", "") << ": kept " << (op["kept"].is_null() ? std::string("nothing (no code)") : op["kept"].get<std::string>())
              << " after " << op["attempts"].size() << (op["attempts"].size() == 1 ? " candidate, " : " candidates, ") << (feedback_ok ? "correct" : "not correct")
              << " on feedback; " << verdict << " (" << passed << " of " << passed + failed << " cases passed); tokens "
              << op.value("input_tokens", int64_t{0}) << " in + " << op.value("output_tokens", int64_t{0}) << " out"
              << (op["cost_usd"].is_null() ? std::string() : ", $" + figure("%.4f", op["cost_usd"].get<double>())) << ", "
              << figure("%.1f", op.value("wall_seconds", 0.0)) << " s\n";
  }
  if (!generation.value("stopped", std::string()).empty()) std::cout << "  stopped early: " << generation.value("stopped", std::string()) << "\n";
}

std::string merged_benchmark_json(const std::vector<std::string>& outputs) {
  nlohmann::json merged;
  merged["benchmarks"] = nlohmann::json::array();
  for (const std::string& path : outputs) {
    if (!exists(path)) continue;
    nlohmann::json one = json_text::parse_or_discarded(read_text(path));
    if (!one.is_object()) continue;
    if (!merged.contains("context") && one.contains("context")) merged["context"] = one["context"];
    for (nlohmann::json& benchmark : one.value("benchmarks", nlohmann::json::array())) merged["benchmarks"].push_back(benchmark);
  }
  return json_text::dump(merged, 2) + "\n";
}

StagingFolder::StagingFolder(std::string path) : path_(std::move(path)) { files::make_directories(path_ + "/logs"); }

StagingFolder::~StagingFolder() {
  if (kept_) return;
  if (preserved_) {
    std::cerr << "the run did not finish; what the model wrote is kept in " << path_ << "\n";
    return;
  }
  files::remove_tree(path_);
}

void StagingFolder::move_to(const std::string& destination) {
  const std::string previous = destination + ".previous-" + std::to_string(getpid());
  const bool replacing = exists(destination);
  if (replacing && std::rename(destination.c_str(), previous.c_str()) != 0) {
    throw error_at(destination, "cannot replace the earlier results folder", "a writable folder");
  }
  if (std::rename(path_.c_str(), destination.c_str()) != 0) {
    if (replacing) std::rename(previous.c_str(), destination.c_str());
    throw error_at(destination, "cannot move the results into place", "a writable folder");
  }
  kept_ = true;
  if (replacing) files::remove_tree(previous);
}

}  // namespace backendbench::planner
