// Unit tests of what the run found, with the commands that reproduce it: planner/findings.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "planner/findings.h"
#include "planner_test_support.h"

namespace backendbench::planner {
namespace {

using namespace test;

TEST(Findings, WrongKernelsFirstWithTheirFirstReasonThenSlowOnesWithTheirSlowestInputs) {
  Verdict wrong_once = verdict_of("a", false), fast = verdict_of("c", true, 2.0, "bench"), aten = verdict_of("a", true);
  wrong_once.op = "add.Tensor";
  fast.op = "add.Tensor";
  aten.backend = "aten";
  wrong_once.errors = {"add.Tensor case a: wrong values\nmore detail", "a second error"};
  std::vector<Verdict> verdicts = {verdict_of("a", true), aten, wrong_once, fast};
  for (const double speedup : {0.5, 0.25, 0.8, 0.9}) {
    Verdict slow = verdict_of("slow" + std::to_string(speedup), true, speedup, "bench");
    slow.arguments = "((T([" + std::to_string(static_cast<int>(speedup * 100)) + "], f32),), {})";
    verdicts.push_back(slow);
  }
  Verdict skipped = verdict_of("s", true);
  skipped.status = Verdict::Status::kSkipped;
  skipped.backend = "impl2";
  skipped.skip_reason = "impl2 is a CUDA kernel and this machine has no CUDA device";
  verdicts.push_back(skipped);
  verdicts.push_back(skipped);

  const Findings findings = run_findings(verdicts, kRunHere);
  ASSERT_EQ(findings.kernels.size(), 2u);  // aten left out: kernels ran
  const KernelFinding& first = findings.kernels[0];
  EXPECT_EQ(first.op, "add.Tensor");
  EXPECT_TRUE(first.wrong());
  EXPECT_EQ(first.failed, 1);
  EXPECT_EQ(first.tests, 2);
  EXPECT_EQ(first.failed_case, "a");
  EXPECT_EQ(first.first_reason, "add.Tensor case a: wrong values");  // its first line
  const KernelFinding& second = findings.kernels[1];
  EXPECT_EQ(second.op, "relu.default");
  EXPECT_TRUE(second.slow());
  EXPECT_EQ(second.timed, 4);
  EXPECT_NEAR(second.speedup, std::pow(0.5 * 0.25 * 0.8 * 0.9, 0.25), 1e-12);
  ASSERT_EQ(second.slowest.size(), 3u);  // the three slowest, slowest first
  EXPECT_DOUBLE_EQ(second.slowest[0].speedup, 0.25);
  EXPECT_EQ(second.slowest[0].arguments, "((T([25], f32),), {})");
  EXPECT_DOUBLE_EQ(second.slowest[2].speedup, 0.8);
  ASSERT_EQ(findings.skipped.size(), 1u);
  EXPECT_EQ(findings.skipped[0].count, 2);
  EXPECT_EQ(findings.skipped[0].backend, "impl2");

  Verdict checked = verdict_of("b", false);  // a failed check: its own message, without the located error
  checked.checks = {{"no_fallback", true, ""}, {"outputs", false, "max abs error 3 at [0, 1]\nexpected 1, got 4"}};
  EXPECT_EQ(run_findings({checked}, kRunHere).kernels[0].first_reason, "outputs: max abs error 3 at [0, 1]");

  const Findings reference_alone = run_findings({aten}, kRunHere);  // a run of aten alone lists it
  ASSERT_EQ(reference_alone.kernels.size(), 1u);
  EXPECT_EQ(reference_alone.kernels[0].backend, "aten");
}

TEST(Findings, SpeedupIntervalComesFromTheSpreadAcrossCases) {
  const Findings one = run_findings({verdict_of("a", true, 2.0, "bench")}, kRunHere);
  EXPECT_DOUBLE_EQ(one.kernels[0].speedup, 2.0);
  EXPECT_TRUE(std::isnan(one.kernels[0].speedup_low));  // one case: no interval
  const Findings same = run_findings({verdict_of("a", true, 2.0, "bench"), verdict_of("b", true, 2.0, "bench")}, kRunHere);
  EXPECT_NEAR(same.kernels[0].speedup_low, 2.0, 1e-12);  // no spread
  EXPECT_NEAR(same.kernels[0].speedup_high, 2.0, 1e-12);
  const Findings spread = run_findings({verdict_of("a", true, 1.0, "bench"), verdict_of("b", true, 4.0, "bench")}, kRunHere);
  // log-mean log 2, sd of the logs log(4)/sqrt(2), t(1) = 12.706: exp(log 2 ± 12.706 * log(4) / 2)
  EXPECT_NEAR(spread.kernels[0].speedup, 2.0, 1e-12);
  EXPECT_NEAR(spread.kernels[0].speedup_low, 2.0 * std::exp(-12.706 * std::log(4.0) / 2), 1e-9);
  EXPECT_NEAR(spread.kernels[0].speedup_high, 2.0 * std::exp(12.706 * std::log(4.0) / 2), 1e-6);
  EXPECT_DOUBLE_EQ(spread.kernels[0].case_low, 1.0);  // and the range of its cases
  EXPECT_DOUBLE_EQ(spread.kernels[0].case_high, 4.0);
}

TEST(Findings, ReproduceCommandRunsTheOneCaseAgainWithItsSalt) {
  Verdict checked = verdict_of("f32_2_ad7ca611", false);
  checked.salt = 0x5eed;
  checked.device = "cpu";
  EXPECT_EQ(reproduce_command(checked, kRunHere),
            "BACKENDBENCH_SALT=0x0000000000005eed BACKENDBENCH_DEVICE=cpu build/backendbench_test_smoke "
            "--gtest_filter=smoke/relu__default.impl1/f32_2_ad7ca611");
  Verdict timed = checked;
  timed.frontend = "bench";
  timed.device = "cuda";
  EXPECT_EQ(reproduce_command(timed, kRunHere),
            "BACKENDBENCH_SALT=0x0000000000005eed BACKENDBENCH_DEVICE=cuda build/bench "
            "'--benchmark_filter=^smoke/relu.default/f32_2_ad7ca611/impl1$'");
  // Elsewhere than where the run started: the whole path, quoted where the shell needs it.
  nlohmann::json elsewhere = kRunHere;
  elsewhere["build_directory"] = "/tmp/a build";
  EXPECT_NE(reproduce_command(checked, elsewhere).find(" '/tmp/a build/backendbench_test_smoke' "), std::string::npos);
  // A kernel that did not compile has no test in the build: the run on its operator shows the error again.
  nlohmann::json broken = kRunHere;
  checked.kernel_file = "/home/me/project/my kernels/relu/relu_implementation_4.cpp";
  broken["kernels_not_compiled"] = {checked.kernel_file};
  EXPECT_EQ(reproduce_command(checked, broken),
            "backendbench run --suite smoke --backend 'my kernels' --ops relu.default --device cpu --no-timing --build build");
}

TEST(Findings, PathsAreShownInTheKernelFolderAndRelativeToWhereTheRunStarted) {
  EXPECT_EQ(shown_path("/home/me/project/build/backendbench_kernel_view/relu/relu_implementation_1.cpp", kRunHere),
            "my kernels/relu/relu_implementation_1.cpp");  // the view's link, shown where the kernel lives
  EXPECT_EQ(shown_path("/home/me/project/traces/smoke.txt", kRunHere), "traces/smoke.txt");
  EXPECT_EQ(shown_path("/home/me/projectile/x.cpp", kRunHere), "/home/me/projectile/x.cpp");  // not under it
  EXPECT_EQ(shown_path("/home/me/project/x.cpp", nlohmann::json::object()), "/home/me/project/x.cpp");  // an older run.json
}

}  // namespace
}  // namespace backendbench::planner
