// CTest's GPU allocation read into the GPU an entry binds to (gpu_slot.h).
#include "backendbench/gpu_slot.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace backendbench {
namespace {

// CTest's variables as a map; absent names are unset.
std::optional<GpuSlot> slot_of(const std::map<std::string, std::string>& variables) {
  return ctest_gpu_slot([&](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& variables) {
  try {
    slot_of(variables);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(GpuSlot, NoAllocationIsNoGpu) {
  EXPECT_FALSE(slot_of({}).has_value());
  EXPECT_FALSE(slot_of({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0", "cores"},
                        {"CTEST_RESOURCE_GROUP_0_CORES", "id:0,slots:1"}})
                   .has_value());
}

TEST(GpuSlot, TheAllocatedGpuIsTheOneBound) {
  const std::optional<GpuSlot> slot =
      slot_of({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0", "gpus"}, {"CTEST_RESOURCE_GROUP_0_GPUS", "id:3,slots:1"}});
  ASSERT_TRUE(slot.has_value());
  EXPECT_EQ(slot->id, "3");
  EXPECT_EQ(slot->visible, "3");
}

TEST(GpuSlot, IdsCountWithinTheGpusChosenBefore) {
  const std::optional<GpuSlot> slot =
      slot_of({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0", "gpus"},
               {"CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:2"}, {"CUDA_VISIBLE_DEVICES", "4,6"}});
  ASSERT_TRUE(slot.has_value());
  EXPECT_EQ(slot->id, "1");
  EXPECT_EQ(slot->visible, "6");
  EXPECT_NE(error_of({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0", "gpus"},
                      {"CTEST_RESOURCE_GROUP_0_GPUS", "id:2,slots:1"}, {"CUDA_VISIBLE_DEVICES", "4,6"}})
                .find("expected an id below 2"),
            std::string::npos);
}

TEST(GpuSlot, AnAllocationOfSeveralGpusIsAnError) {
  const std::string error = error_of({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0", "gpus"},
                                      {"CTEST_RESOURCE_GROUP_0_GPUS", "id:0,slots:1;id:1,slots:1"}});
  EXPECT_EQ(error.rfind("CTEST_RESOURCE_GROUP_0_GPUS: error: 'id:0,slots:1;id:1,slots:1' is not CTest's allocation of one GPU; expected id:<id>,slots:<n>", 0), 0u)
      << error;
}

TEST(GpuSlot, AMalformedCountIsAnError) {
  EXPECT_EQ(error_of({{"CTEST_RESOURCE_GROUP_COUNT", "x"}}).rfind("CTEST_RESOURCE_GROUP_COUNT: error: 'x'", 0), 0u);
}

TEST(GpusToAllocate, CudasCountOrTheSchedulersList) {
  const auto lookup = [](const char* visible) {
    return [visible](const char* name) -> const char* {
      return std::string(name) == "CUDA_VISIBLE_DEVICES" ? visible : nullptr;
    };
  };
  EXPECT_EQ(gpus_to_allocate(lookup(nullptr), 4), 4);
  EXPECT_EQ(gpus_to_allocate(lookup("2,3"), 2), 2);
  EXPECT_EQ(gpus_to_allocate(lookup("0,1"), 0), 2);  // Slurm's GPUs on a machine without CUDA
  EXPECT_EQ(gpus_to_allocate(lookup(""), 0), 0);
  EXPECT_EQ(gpus_to_allocate(lookup(nullptr), 0), 0);
}

TEST(CtestResourceSpec, EveryGpuWithItsSlots) {
  EXPECT_EQ(ctest_resource_spec(2, 3),
            "{\"version\": {\"major\": 1, \"minor\": 0},\n \"local\": [{\"gpus\": [{\"id\": \"0\", \"slots\": 3}, "
            "{\"id\": \"1\", \"slots\": 3}]}]}\n");
}

}  // namespace
}  // namespace backendbench
