// main() of the generated test executables: GoogleTest's, except that a run in which every
// selected case was skipped (a CUDA kernel on a machine without a GPU) exits with
// kAllSkippedExitCode, which the generated CTest entries map to "Skipped" instead of "Passed".
#include <gtest/gtest.h>

namespace {
constexpr int kAllSkippedExitCode = 77;
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  const ::testing::UnitTest& run = *::testing::UnitTest::GetInstance();
  if (result == 0 && run.test_to_run_count() > 0 && run.skipped_test_count() == run.test_to_run_count()) {
    return kAllSkippedExitCode;
  }
  return result;
}
