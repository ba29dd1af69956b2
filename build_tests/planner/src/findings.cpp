// What a reader of a run needs first; see findings.h.
#include "planner/findings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <tuple>

#include "backendbench/json_numbers.h"
#include "planner/run_scores.h"
#include "planner/build_tree.h"
#include "language/job.h"
#include "language/naming.h"

namespace backendbench::planner {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// `text` as one shell word: as it is when it holds only safe characters, else single-quoted.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string("/._-=+:,@%").find(c) != std::string::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

void add_interval(KernelFinding& kernel, const std::vector<double>& speedups) {
  if (speedups.empty()) return;
  const SpeedupSpread spread = speedup_spread(speedups);
  kernel.speedup = spread.geomean;
  kernel.speedup_low = spread.low;
  kernel.speedup_high = spread.high;
  kernel.case_low = spread.lowest;
  kernel.case_high = spread.highest;
}

}  // namespace

KernelFinding::KernelFinding() : speedup(NAN), speedup_low(NAN), speedup_high(NAN), case_low(NAN), case_high(NAN) {}

bool KernelFinding::slow() const { return !wrong() && timed > 0 && speedup < 1.0; }

std::string shown_path(const std::string& path, const nlohmann::json& run) {
  std::string shown = path;
  const std::string view = run.value("build_directory", std::string()) + "/backendbench_kernel_view/";
  const std::string kernels = run.value("kernels_directory", std::string());
  if (!kernels.empty() && view.size() > 1 && starts_with(shown, view)) shown = kernels + "/" + shown.substr(view.size());
  const std::string here = run.value("working_directory", std::string());
  if (!here.empty() && starts_with(shown, here + "/")) shown = shown.substr(here.size() + 1);
  return shown;
}

std::string reproduce_command(const Verdict& verdict, const nlohmann::json& run) {
  const std::string build = run.value("build_directory", std::string("build"));
  // A kernel left out of the build (a kernel folder problem's, or one that did not compile) has no
  // test: the run's command for its operator alone says its diagnostic or compiler error again.
  std::vector<std::string> left_out;
  for (const nlohmann::json& broken : run.value("kernels_not_compiled", nlohmann::json::array())) {
    if (broken.is_string()) left_out.push_back(broken.get<std::string>());
  }
  for (const nlohmann::json& problem : run.value("kernel_problems", nlohmann::json::array())) {
    if (problem.is_object() && problem.contains("location") && problem["location"].is_string()) {
      left_out.push_back(problem["location"].get<std::string>());
    }
  }
  for (const std::string& kernel_file : left_out) {
    if (kernel_file == verdict.kernel_file) {
      return "backendbench run --suite " + shell_word(verdict.suite) + " --backend " +
             shell_word(shown_path(run.value("kernels_directory", std::string()), run)) + " --ops " + shell_word(verdict.op) +
             " --device " + shell_word(run.value("device", std::string("cpu"))) + " --no-timing --build " +
             shell_word(shown_path(build, run));
    }
  }
  const planner::BuildTree tree("", build);
  const std::optional<naming::OperatorName> op = naming::OperatorName::from_user(verdict.op);
  if (!op) return "";
  std::string command = "BACKENDBENCH_SALT=" + salt_text(verdict.salt) + " BACKENDBENCH_DEVICE=" +
                        shell_word(verdict.device.empty() ? run.value("device", std::string("cpu")) : verdict.device) + " ";
  if (is_performance_test(verdict)) {
    return command + shell_word(shown_path(tree.bench_executable(), run)) + " " +
           shell_word("--benchmark_filter=^" + naming::benchmark_name(verdict.suite, *op, verdict.case_name, verdict.backend) + "$");
  }
  return command + shell_word(shown_path(tree.test_executable(verdict.suite), run)) + " " +
         shell_word("--gtest_filter=" + naming::gtest_suite(verdict.suite, *op) + "." +
                    naming::gtest_test(verdict.backend, verdict.case_name));
}

Findings run_findings(const std::vector<Verdict>& verdicts, const nlohmann::json& run) {
  Findings findings;
  const bool kernels_ran = std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& verdict) {
    return verdict.backend != naming::kReferenceBackend && verdict.status != Verdict::Status::kSkipped;
  });
  std::map<std::pair<std::string, std::string>, KernelFinding> kernels;
  std::map<std::pair<std::string, std::string>, std::vector<double>> speedups;
  std::map<std::pair<std::string, std::string>, int> skipped;
  for (const Verdict& verdict : verdicts) {
    if (verdict.status == Verdict::Status::kSkipped) {
      ++skipped[{verdict.backend, verdict.skip_reason}];
      continue;
    }
    if (kernels_ran && verdict.backend == naming::kReferenceBackend) continue;
    KernelFinding& kernel = kernels[{verdict.op, verdict.backend}];
    kernel.op = verdict.op;
    kernel.backend = verdict.backend;
    if (kernel.kernel_file.empty()) kernel.kernel_file = shown_path(verdict.kernel_file, run);
    ++kernel.tests;
    if (verdict.status == Verdict::Status::kFailed && kernel.failed++ == 0) {
      kernel.failed_case = verdict.case_name;
      kernel.first_reason = first_failure_reason(verdict);
      kernel.reproduce = reproduce_command(verdict, run);
    }
    if (!is_performance_test(verdict)) continue;
    ++kernel.timed;
    speedups[{verdict.op, verdict.backend}].push_back(counted_speedup(verdict));
    if (verdict.passed() && verdict.timing && verdict.timing->speedup > 0 && verdict.timing->speedup < 1.0) {
      kernel.slowest.push_back({verdict.suite, verdict.case_name, verdict.arguments,
                                shown_path(verdict.trace_file, run) + ":" + std::to_string(verdict.trace_line),
                                verdict.timing->speedup});
    }
  }
  for (auto& [key, kernel] : kernels) {
    add_interval(kernel, speedups[key]);
    std::stable_sort(kernel.slowest.begin(), kernel.slowest.end(),
                     [](const SlowCase& a, const SlowCase& b) { return a.speedup < b.speedup; });
    if (kernel.slowest.size() > 3) kernel.slowest.resize(3);
    findings.kernels.push_back(std::move(kernel));
  }
  // Wrong first (most failures first), then slow (slowest first), then the rest as they were.
  auto rank = [](const KernelFinding& kernel) {
    return std::make_tuple(kernel.wrong() ? 0 : kernel.slow() ? 1 : 2, kernel.wrong() ? -kernel.failed : 0,
                           kernel.slow() ? kernel.speedup : 0.0);
  };
  std::stable_sort(findings.kernels.begin(), findings.kernels.end(),
                   [&](const KernelFinding& a, const KernelFinding& b) { return rank(a) < rank(b); });
  for (const auto& [key, count] : skipped) findings.skipped.push_back({key.first, key.second, count});
  std::stable_sort(findings.skipped.begin(), findings.skipped.end(),
                   [](const SkippedTests& a, const SkippedTests& b) { return a.count > b.count; });
  return findings;
}

nlohmann::json findings_json(const Findings& findings) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelFinding& kernel : findings.kernels) {
    nlohmann::json slowest = nlohmann::json::array();
    for (const SlowCase& slow : kernel.slowest) {
      slowest.push_back({{"suite", slow.suite}, {"case", slow.case_name}, {"arguments", slow.arguments},
                         {"source", slow.source}, {"speedup", json_number(slow.speedup)}});
    }
    kernels.push_back({{"op", kernel.op},
                       {"backend", kernel.backend},
                       {"kernel_file", kernel.kernel_file},
                       {"tests", kernel.tests},
                       {"failed", kernel.failed},
                       {"timed", kernel.timed},
                       {"wrong", kernel.wrong()},
                       {"slow", kernel.slow()},
                       {"failed_case", kernel.failed_case},
                       {"first_reason", kernel.first_reason},
                       {"reproduce", kernel.reproduce},
                       {"speedup", number_or_null(kernel.speedup)},
                       {"speedup_low", number_or_null(kernel.speedup_low)},
                       {"speedup_high", number_or_null(kernel.speedup_high)},
                       {"case_low", number_or_null(kernel.case_low)},
                       {"case_high", number_or_null(kernel.case_high)},
                       {"slowest", slowest}});
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedTests& group : findings.skipped) {
    skipped.push_back({{"backend", group.backend}, {"reason", group.reason}, {"count", group.count}});
  }
  return {{"kernels", kernels}, {"skipped", skipped}};
}

}  // namespace backendbench::planner
