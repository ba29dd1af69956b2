// Binding CTest's GPU allocation; see gpu_slot.h.
#include "backendbench/gpu_slot.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace backendbench {
namespace {

std::invalid_argument bad(const std::string& name, const std::string& value, const std::string& expected) {
  return std::invalid_argument(name + ": error: '" + value + "' is not CTest's allocation of one GPU; expected " + expected);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  return parts;
}

bool is_index(const std::string& text) {
  return !text.empty() && text.size() <= 4 && text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::optional<GpuSlot> ctest_gpu_slot(const std::function<const char*(const char*)>& variable) {
  const char* count_text = variable("CTEST_RESOURCE_GROUP_COUNT");
  if (count_text == nullptr) return std::nullopt;
  if (!is_index(count_text)) throw bad("CTEST_RESOURCE_GROUP_COUNT", count_text, "a number of resource groups");
  const int groups = std::stoi(count_text);
  std::optional<GpuSlot> slot;
  for (int group = 0; group < groups; ++group) {
    const std::string prefix = "CTEST_RESOURCE_GROUP_" + std::to_string(group);
    const char* types = variable(prefix.c_str());
    if (types == nullptr) throw bad(prefix, "", "the group's resource types (CTest sets it with the count)");
    bool gpus = false;
    for (const std::string& type : split(types, ',')) gpus = gpus || type == "gpus";
    if (!gpus) continue;
    const std::string name = prefix + "_GPUS";
    const char* value = variable(name.c_str());
    const std::string allocation = value == nullptr ? "" : value;
    // One GPU per entry: "id:<id>,slots:<n>" (several would be ';'-separated).
    const std::vector<std::string> fields = split(allocation, ',');
    if (slot || fields.size() != 2 || fields[0].rfind("id:", 0) != 0 || fields[1].rfind("slots:", 0) != 0 ||
        fields[0].size() == 3 || !is_index(fields[1].substr(6))) {
      throw bad(name, allocation, "id:<id>,slots:<n> (an entry takes one GPU: RESOURCE_GROUPS \"gpus:<slots>\")");
    }
    slot = GpuSlot{fields[0].substr(3), fields[0].substr(3)};
  }
  if (!slot) return std::nullopt;
  // GPUs chosen before (CUDA_VISIBLE_DEVICES=2,3): the spec counts within them.
  if (const char* visible = variable("CUDA_VISIBLE_DEVICES"); visible != nullptr && *visible != '\0') {
    const std::vector<std::string> devices = split(visible, ',');
    if (!is_index(slot->id) || std::stoul(slot->id) >= devices.size()) {
      throw bad("CTEST_RESOURCE_GROUP_*_GPUS", "id:" + slot->id,
                "an id below " + std::to_string(devices.size()) + ", the number of GPUs CUDA_VISIBLE_DEVICES=" + visible +
                    " lets this entry see");
    }
    slot->visible = devices[std::stoul(slot->id)];
  }
  return slot;
}

std::optional<GpuSlot> bind_ctest_gpu_slot() {
  std::optional<GpuSlot> slot = ctest_gpu_slot([](const char* name) { return std::getenv(name); });
  if (!slot) {
    const char* bound = std::getenv("BACKENDBENCH_BOUND_GPU");
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (bound != nullptr && visible != nullptr) return GpuSlot{bound, visible};
    return std::nullopt;
  }
  // A served supervisor started seeing its GPU's device file alone (the planner's
  // entry_servers.h): CUDA finds that one GPU, as device 0; the verdicts still name it.
  const bool one_gpu_file = std::getenv("BACKENDBENCH_ONE_GPU_FILE") != nullptr;
  ::setenv("CUDA_VISIBLE_DEVICES", one_gpu_file ? "0" : slot->visible.c_str(), 1);
  ::setenv("BACKENDBENCH_BOUND_GPU", slot->id.c_str(), 1);
  ::unsetenv("CTEST_RESOURCE_GROUP_COUNT");
  return slot;
}

int gpus_to_allocate(const std::function<const char*(const char*)>& variable, int cuda_devices) {
  if (cuda_devices > 0) return cuda_devices;
  const char* visible = variable("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr || *visible == '\0') return 0;
  return static_cast<int>(split(visible, ',').size());
}

std::string ctest_resource_spec(int gpus, int slots) {
  std::string text = "{\"version\": {\"major\": 1, \"minor\": 0},\n \"local\": [{\"gpus\": [";
  for (int gpu = 0; gpu < gpus; ++gpu) {
    text += std::string(gpu ? ", " : "") + "{\"id\": \"" + std::to_string(gpu) + "\", \"slots\": " + std::to_string(slots) + "}";
  }
  return text + "]}]}\n";
}

}  // namespace backendbench
