// Who holds the GPU, said for a failed case (supervisor/gpu_holders.h).
#include "supervisor/gpu_holders.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace backendbench {
namespace {

std::string name_of(pid_t pid) { return pid == 777 ? "python3" : "backendbench-wo"; }

TEST(GpuHolders, EachIsSaidAsTheSupervisorsTheTimedWorkersAnotherWorkersOrAnotherProgramsOwn) {
  const std::vector<pid_t> supervisor_tree = {100, 200, 201, 300, 301};
  const std::vector<pid_t> timed_worker = {200, 201};
  const std::vector<GpuHolder> said = classify_gpu_holders({100, 201, 301, 777}, 100, supervisor_tree, timed_worker, name_of);
  ASSERT_EQ(said.size(), 4u);
  EXPECT_EQ(said[0].whose, GpuHolder::Whose::kSupervisor);
  EXPECT_EQ(said[1].whose, GpuHolder::Whose::kTimedWorker);
  EXPECT_EQ(said[2].whose, GpuHolder::Whose::kOtherWorker);
  EXPECT_EQ(said[3].whose, GpuHolder::Whose::kOtherProgram);
  EXPECT_EQ(said[3].name, "python3");
}

TEST(GpuHolders, AnotherProgramIsNamedAndTheKernelNotBlamed) {
  const GpuHoldersSaid said =
      say_gpu_holders(classify_gpu_holders({100, 201, 777}, 100, {100, 200, 201}, {200, 201}, name_of));
  EXPECT_TRUE(said.other_programs);
  EXPECT_EQ(said.others, "777 (python3)");
  EXPECT_NE(said.text.find("shared with another program (777 (python3))"), std::string::npos) << said.text;
  EXPECT_NE(said.text.find("says nothing of the kernel"), std::string::npos) << said.text;
  EXPECT_NE(said.text.find("201 (backendbench-wo) of the timed kernel's worker"), std::string::npos) << said.text;
}

TEST(GpuHolders, OnlyThisRunsProcessesAreNoOtherProgram) {
  const GpuHoldersSaid said = say_gpu_holders(classify_gpu_holders({100, 201, 301}, 100, {100, 200, 201, 300, 301}, {200, 201}, name_of));
  EXPECT_FALSE(said.other_programs);
  EXPECT_EQ(said.text,
            "processes holding the GPU besides the supervisor: 201 (backendbench-wo) of the timed kernel's worker, "
            "301 (backendbench-wo) of another kernel's worker, stopped");
  EXPECT_EQ(say_gpu_holders(classify_gpu_holders({100}, 100, {100}, {}, name_of)).text, "") << "the supervisor alone";
}

TEST(GpuHolders, WhereTheListCannotBeHadNothingIsSaid) {
  const GpuHoldersSaid said = say_gpu_holders(std::nullopt);
  EXPECT_FALSE(said.other_programs);
  EXPECT_EQ(said.text, "");
}

}  // namespace
}  // namespace backendbench
