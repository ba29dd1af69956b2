// Unit tests of the run's entries and their jobs: planner/jobs.h.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "planner/jobs.h"

namespace backendbench::planner {
namespace {

TEST(Jobs, OperatorsNoSuiteHasAreNamed) {
  EXPECT_EQ(unmatched_filters({"relu", "mul", "add.Tensor"}, {"relu.default", "add.Tensor", "add_.Tensor"}),
            (std::vector<std::string>{"mul"}));
  EXPECT_TRUE(unmatched_filters({"add"}, {"add.Tensor"}).empty());
}

TEST(Jobs, AnEntryAsAJobCarriesItsPartTheSaltAndTheDevice) {
  Entry entry{"smoke", "relu.default", "impl1", "relu/relu_implementation_1.cpp"};
  entry.cases.resize(5);
  entry.parts = 2;
  const Job whole = job_of(entry, Job::Mode::kCheck, 42, "");
  EXPECT_EQ(whole.part, 0);
  EXPECT_EQ(whole.salt, std::optional<uint64_t>(42));
  EXPECT_FALSE(whole.device.has_value());
  const Job second = job_of(entry, Job::Mode::kTime, 7, "cuda", entry.part(1));
  EXPECT_EQ(second.part, 2);
  EXPECT_EQ(second.parts, 2);
  EXPECT_EQ(second.device, std::optional<std::string>("cuda"));
  EXPECT_EQ(entry.part_cases(0) + entry.part_cases(1), 5u);
}

}  // namespace
}  // namespace backendbench::planner
