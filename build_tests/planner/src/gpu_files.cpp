// The device file of each GPU; see gpu_files.h.
#include "planner/gpu_files.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace backendbench::planner {
namespace {

// Domain, bus, device and function of "dddd:bb:dd.f" (any number of domain digits, any case).
std::optional<std::vector<unsigned long>> pci_fields(const std::string& address) {
  unsigned long domain = 0, bus = 0, device = 0, function = 0;
  char end = 0;
  if (std::sscanf(address.c_str(), "%lx:%lx:%lx.%lx%c", &domain, &bus, &device, &function, &end) != 4) return std::nullopt;
  return std::vector<unsigned long>{domain, bus, device, function};
}

std::string whole_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<int> device_minor(const std::string& information) {
  std::istringstream lines(information);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Device Minor:", 0) != 0) continue;
    int minor = -1;
    char end = 0;
    if (std::sscanf(line.c_str() + 13, " %d %c", &minor, &end) == 1 && minor >= 0) return minor;
  }
  return std::nullopt;
}

bool same_pci_address(const std::string& a, const std::string& b) {
  const auto first = pci_fields(a), second = pci_fields(b);
  return first && second && *first == *second;
}

std::vector<std::string> gpu_device_files() {
  // GPUs chosen by UUID, or MIG instances (several share one device file): left as they are.
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      visible != nullptr && std::string(visible).find_first_not_of("0123456789,") != std::string::npos) {
    return {};
  }
  // The driver's own library, opened here rather than linked: the program runs where it is missing.
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) return {};
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using Get = int (*)(int*, int);
  using BusId = int (*)(char*, int, int);
  const auto init = reinterpret_cast<Init>(::dlsym(cuda, "cuInit"));
  const auto count = reinterpret_cast<Count>(::dlsym(cuda, "cuDeviceGetCount"));
  const auto get = reinterpret_cast<Get>(::dlsym(cuda, "cuDeviceGet"));
  const auto bus_id = reinterpret_cast<BusId>(::dlsym(cuda, "cuDeviceGetPCIBusId"));
  int devices = 0;
  if (init == nullptr || count == nullptr || get == nullptr || bus_id == nullptr || init(0) != 0 || count(&devices) != 0) {
    return {};
  }
  const std::string driver = "/proc/driver/nvidia/gpus";
  std::vector<std::string> files;
  for (int index = 0; index < devices; ++index) {
    int device = -1;
    char address[64] = {};
    if (get(&device, index) != 0 || bus_id(address, sizeof(address), device) != 0) return {};
    std::optional<int> minor;
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(driver, ignored)) {
      if (same_pci_address(entry.path().filename().string(), address)) minor = device_minor(whole_file(entry.path() / "information"));
    }
    const std::string file = minor ? "/dev/nvidia" + std::to_string(*minor) : "";
    if (file.empty() || ::access(file.c_str(), F_OK) != 0) return {};
    files.push_back(file);
  }
  return files;
}

std::vector<std::string> shared_gpu_files() {
  std::vector<std::string> files;
  for (const char* file : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-caps"}) {
    if (::access(file, F_OK) == 0) files.push_back(file);
  }
  return files;
}

}  // namespace backendbench::planner
