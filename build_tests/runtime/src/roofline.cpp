// Bytes and FLOPs per case, and device peaks; see roofline.h.
#include "backendbench/roofline.h"

#include <unistd.h>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>


#include "backendbench/files.h"
#include "backendbench/tensor_values.h"
#include "backendbench/timing.h"
#include "language/json_text.h"
#include "language/syntax.h"

namespace backendbench {
namespace {

// Elements a tensor's view reaches in memory: zero strides (broadcast) read one element.
double touched_elements(const at::Tensor& tensor) {
  if (tensor.numel() == 0) return 0;
  if (tensor.layout() != at::kStrided) return static_cast<double>(tensor._nnz());
  const int64_t extent = parse::storage_extent(tensor.sizes().vec(), tensor.strides().vec()).value_or(tensor.numel());
  return static_cast<double>(std::min(extent, tensor.numel()));
}

double matmul_flops(FlopFormula formula, const std::vector<c10::IValue>& inputs) {
  auto size = [&](size_t argument, int64_t dim) { return static_cast<double>(inputs.at(argument).toTensor().size(dim)); };
  switch (formula) {
    case FlopFormula::kMm: return 2 * size(0, 0) * size(0, 1) * size(1, 1);
    case FlopFormula::kAddmm: return 2 * size(1, 0) * size(1, 1) * size(2, 1);
    case FlopFormula::kBmm: return 2 * size(0, 0) * size(0, 1) * size(0, 2) * size(1, 2);
    case FlopFormula::kBaddbmm: return 2 * size(1, 0) * size(1, 1) * size(1, 2) * size(2, 2);
    default: return 0;
  }
}

// Elements of a convolution's output, from its arguments (input, weight, bias, stride,
// padding, dilation, transposed, ...): the usual size formula per spatial dimension.
double convolution_output_elements(const std::vector<c10::IValue>& inputs) {
  const at::Tensor& input = inputs.at(0).toTensor();
  const at::Tensor& weight = inputs.at(1).toTensor();
  const std::vector<int64_t> stride = inputs.at(3).toIntVector(), padding = inputs.at(4).toIntVector(),
                             dilation = inputs.at(5).toIntVector();
  auto at_dim = [](const std::vector<int64_t>& values, size_t d) { return values.size() == 1 ? values[0] : values.at(d); };
  double elements = static_cast<double>(input.size(0) * weight.size(0));
  for (int64_t d = 2; d < input.dim(); ++d) {
    const size_t s = static_cast<size_t>(d - 2);
    const int64_t extent = input.size(d) + 2 * at_dim(padding, s) - at_dim(dilation, s) * (weight.size(d) - 1) - 1;
    elements *= static_cast<double>(std::max<int64_t>(0, extent / at_dim(stride, s) + 1));
  }
  return elements;
}

// 2 × multiply-adds: each element of the larger activation side meets weight.numel()/weight.size(0) weights.
double convolution_flops(FlopFormula formula, const std::vector<c10::IValue>& inputs) {
  if (formula == FlopFormula::kConvolution) {
    const at::Tensor& input = inputs.at(0).toTensor();
    const at::Tensor& weight = inputs.at(1).toTensor();
    const bool transposed = inputs.at(6).toBool();
    const double per_element = static_cast<double>(weight.numel() / weight.size(0));
    const double elements = transposed ? static_cast<double>(input.numel()) : convolution_output_elements(inputs);
    return 2 * elements * per_element;
  }
  if (formula == FlopFormula::kConvolutionBackward) {
    // (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask)
    const at::Tensor& grad_output = inputs.at(0).toTensor();
    const at::Tensor& weight = inputs.at(2).toTensor();
    const double one = 2 * static_cast<double>(grad_output.numel()) * static_cast<double>(weight.numel() / weight.size(0));
    const std::vector<bool> mask = {inputs.at(10).toBoolList().get(0), inputs.at(10).toBoolList().get(1)};
    return one * ((mask[0] ? 1 : 0) + (mask[1] ? 1 : 0));
  }
  return 0;
}

}  // namespace

double matrix_flops(const OperatorFacts& facts, const std::vector<c10::IValue>& inputs) {
  try {
    return matmul_flops(facts.flops, inputs) + convolution_flops(facts.flops, inputs);
  } catch (const std::exception&) {
    return 0;  // an argument not of the expected form
  }
}

Work work_of(const OperatorFacts& facts, const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& outputs) {
  Work work;
  double input_elements = 0, output_elements = 0;
  bool dtype_found = false;
  for (const at::Tensor& tensor : tensors_in(inputs)) {
    if (!tensor.defined()) continue;
    work.bytes += touched_elements(tensor) * static_cast<double>(tensor.element_size());
    input_elements = std::max(input_elements, static_cast<double>(tensor.numel()));
    if (!dtype_found && at::isFloatingType(tensor.scalar_type())) {
      work.dtype = tensor.scalar_type();
      dtype_found = true;
    }
  }
  for (const at::Tensor& tensor : tensors_in(outputs)) {
    if (!tensor.defined()) continue;
    work.bytes += static_cast<double>(tensor.numel()) * static_cast<double>(tensor.element_size());
    output_elements = std::max(output_elements, static_cast<double>(tensor.numel()));
  }
  work.flops = matrix_flops(facts, inputs);
  if (work.flops == 0) work.flops = std::max(input_elements, output_elements);
  return work;
}

Peaks peaks_for_device_name(const std::string& name, at::ScalarType dtype) {
  struct Entry {
    const char* name;
    double tb_per_second, tensor_tflops, f32_tflops;
  };
  // Vendor datasheets (SXM parts): HBM bandwidth, dense f16/bf16 tensor-core and plain f32 peaks.
  static const std::vector<Entry> kTable = {
      {"H200", 4.8, 989.5, 66.9}, {"H100", 3.35, 989.5, 66.9}, {"A100", 2.039, 312, 19.5}};
  for (const Entry& entry : kTable) {
    if (name.find(entry.name) == std::string::npos) continue;
    const bool tensor_core = dtype == at::kHalf || dtype == at::kBFloat16;
    return {entry.tb_per_second * 1e12, (tensor_core ? entry.tensor_tflops : entry.f32_tflops) * 1e12,
            std::string("table: ") + entry.name};
  }
  return {};
}

Peaks device_peaks(c10::Device device, at::ScalarType dtype, const Settings& settings) {
  Peaks peaks;
  if (device.is_cuda()) {
    const std::string name = cuda_device_facts(device).name;
    if (!name.empty()) peaks = peaks_for_device_name(name, dtype);
  }
  if (device.is_cpu()) peaks = cpu_peaks(settings.cpu_peaks_path);
  // The user's figures are a bound: they replace measured ones, and the case's other figure is
  // then not used (a measured bandwidth beside a given compute peak would bound nothing).
  if (settings.peak_gbps > 0 || settings.peak_tflops > 0) {
    if (!peaks.bound) peaks = Peaks{};
    if (settings.peak_gbps > 0) peaks.bytes_per_second = settings.peak_gbps * 1e9;
    if (settings.peak_tflops > 0) peaks.flops_per_second = settings.peak_tflops * 1e12;
    peaks.source = "BACKENDBENCH_PEAK_*";
    peaks.bound = true;
  }
  return peaks;
}

double honest_floor_seconds(const Work& work, const Peaks& peaks) {
  if (!peaks.bound) return 0;
  double at_peak = 0;
  if (peaks.bytes_per_second > 0) at_peak = std::max(at_peak, work.bytes / peaks.bytes_per_second);
  if (peaks.flops_per_second > 0) at_peak = std::max(at_peak, work.flops / peaks.flops_per_second);
  return at_peak / 1.05;
}

bool beats_peaks(const Work& work, double seconds, const Peaks& peaks) {
  return seconds > 0 && seconds < honest_floor_seconds(work, peaks);
}

bool suspect_time(const Work& work, double kernel_seconds, double reference_seconds, const Peaks& peaks) {
  return beats_peaks(work, kernel_seconds, peaks) && !beats_peaks(work, reference_seconds, peaks);
}

std::string cpu_identity() {
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
    break;
  }
  return model + " | " + std::to_string(std::thread::hardware_concurrency()) + " CPUs | " +
         std::to_string(at::get_num_threads()) + " threads";
}

uint64_t last_level_cache_bytes() {
  for (const int level : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long bytes = sysconf(level);
    if (bytes > 0) return static_cast<uint64_t>(bytes);
  }
  return 0;
}

Peaks measure_cpu_peaks() {
  using clock = std::chrono::steady_clock;
  const auto best_of = [](int runs, const std::function<void()>& work) {
    work();  // first touch of the pages, ATen's threads started
    double best = 0;
    for (int run = 0; run < runs; ++run) {
      const auto start = clock::now();
      work();
      const double seconds = std::chrono::duration<double>(clock::now() - start).count();
      if (best == 0 || seconds < best) best = seconds;
    }
    return best;
  };
  Peaks peaks;
  {
    const int64_t elements = int64_t{64} << 20;  // 256 MiB of f32: far past any CPU's caches
    at::Tensor source = at::ones({elements}, at::kFloat), destination = at::empty({elements}, at::kFloat);
    const double seconds = best_of(5, [&] { destination.copy_(source); });
    if (seconds > 0) peaks.bytes_per_second = 2.0 * static_cast<double>(elements) * 4 / seconds;
  }
  {
    constexpr int64_t n = 1536;
    at::Tensor a = at::rand({n, n}, at::kFloat), b = at::rand({n, n}, at::kFloat), c = at::empty({n, n}, at::kFloat);
    const double seconds = best_of(5, [&] { at::mm_out(c, a, b); });
    if (seconds > 0) peaks.flops_per_second = 2.0 * n * n * n / seconds;
  }
  peaks.source = "measured: " + cpu_identity();
  peaks.bound = false;
  return peaks;
}

namespace {
constexpr const char* kCpuPeaksSchema = "backendbench-cpu-peaks";
}  // namespace

std::optional<Peaks> cached_cpu_peaks(const std::string& file_text, const std::string& identity) {
  const nlohmann::json file = json_text::parse_or_discarded(file_text);
  if (!file.is_object() || file.value("schema", "") != kCpuPeaksSchema || file.value("version", 0) != 1) return std::nullopt;
  const nlohmann::json machines = file.value("machines", nlohmann::json::object());
  if (!machines.is_object() || !machines.contains(identity)) return std::nullopt;
  const nlohmann::json& entry = machines[identity];
  if (!entry.is_object() || !entry.value("bytes_per_second", nlohmann::json()).is_number() ||
      !entry.value("flops_per_second", nlohmann::json()).is_number()) {
    return std::nullopt;
  }
  Peaks peaks;
  peaks.bytes_per_second = entry["bytes_per_second"].get<double>();
  peaks.flops_per_second = entry["flops_per_second"].get<double>();
  if (!(peaks.bytes_per_second > 0) || !(peaks.flops_per_second > 0)) return std::nullopt;
  peaks.source = "measured: " + identity;
  peaks.bound = false;
  return peaks;
}

std::string with_cpu_peaks(const std::string& file_text, const std::string& identity, const Peaks& peaks) {
  nlohmann::json file = json_text::parse_or_discarded(file_text);
  if (!file.is_object() || file.value("schema", "") != kCpuPeaksSchema || file.value("version", 0) != 1 ||
      !file.value("machines", nlohmann::json()).is_object()) {
    file = {{"schema", kCpuPeaksSchema}, {"version", 1}, {"machines", nlohmann::json::object()}};
  }
  file["machines"][identity] = {{"bytes_per_second", peaks.bytes_per_second}, {"flops_per_second", peaks.flops_per_second}};
  return json_text::dump(file, 2) + "\n";
}

Peaks cpu_peaks(const std::string& path) {
  if (path.empty() || path == "none") return Peaks{.bound = false};
  static std::mutex mutex;
  static auto* known = new std::map<std::string, Peaks>;  // per path, once per process
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = known->find(path); it != known->end()) return it->second;
  std::string text;
  if (std::ifstream file(path); file) {
    std::stringstream read;
    read << file.rdbuf();
    text = read.str();
  }
  const std::string identity = cpu_identity();
  Peaks peaks;
  if (const std::optional<Peaks> cached = cached_cpu_peaks(text, identity)) {
    peaks = *cached;
  } else {
    peaks = measure_cpu_peaks();
    try {
      files::make_directories(path.substr(0, path.find_last_of('/')));
      files::write_whole(path, with_cpu_peaks(text, identity, peaks));
    } catch (const std::exception&) {
      // Not kept (a read-only home, say): measured again by the next process.
    }
  }
  (*known)[path] = peaks;
  return peaks;
}

}  // namespace backendbench
