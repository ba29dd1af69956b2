// What the backend's registration path costs (not run by CTest; scripts/backend_overhead.py runs
// it and prints the figures): the passthrough kernels (gallery/passthrough: each calls ATen's own
// operator, which the recursion rule routes to ATen's kernel) registered for relu, add, mul and
// div, against eager.
//
// Paired, because a shared machine drifts by more than the effect: every iteration times the same
// work eagerly and with the backend enabled, back to back (in alternating order), and the
// counters are the medians of each and the median of the per-pair ratios (or differences), with
// a distribution-free 95 % interval for that median (order statistics).
// First argument: 0 ATen's own relu kernel (at::native::relu) registered as the override: the
// registration path alone, nothing else differs from eager; 1 the four passthrough functional
// overloads (the path, plus the kernel's second dispatch into ATen through the recursion rule);
// 2 with their derived in-place and out= siblings too (add_ as add then copy_: what serving
// variants from a functional kernel costs). Second argument: 0 CPU, 1 CUDA (skipped without a GPU).
//   Dispatch/*: one at::relu on a one-element tensor, ns per call (each measurement 256 calls;
//     on CUDA the host's time to launch them, the GPU synchronized after each 256);
//   TransformerStep/*: a torch::nn TransformerEncoder's forward and backward (CPU: 2 layers,
//     d_model 128, 8 × 64; CUDA: 4 layers, d_model 256, 32 × 128), synchronized per step.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include <ATen/ops/relu_native.h>

#include "backendbench/enable.h"
#include "backendbench/overrides.h"

namespace {

const char* const kLabels[] = {"ATen's own relu kernel", "passthrough functional overloads",
                               "passthrough with derived variants"};

at::Tensor atens_own_relu(const at::Tensor& self) { return at::native::relu(self); }

std::shared_ptr<void> enable(int64_t how) {
  if (how == 0) {
    std::vector<backendbench::OverrideChoice> choices;
    for (const c10::DispatchKey key : {c10::DispatchKey::CPU, c10::DispatchKey::CUDA}) {
      if (key == c10::DispatchKey::CUDA && !torch::cuda::is_available()) continue;  // a CPU-only libtorch has no kernel there
      choices.push_back({"relu.default", "aten", "at::native::relu", key, backendbench::dispatcher_kernel_of<&atens_own_relu>()});
    }
    return std::make_shared<backendbench::OverrideGuard>(std::move(choices));
  }
  backendbench::EnableOptions options{.check_unverified = false};
  if (how == 1) options.include = {"relu.default", "add.Tensor", "mul.Tensor", "div.Tensor"};
  return std::make_shared<backendbench::Enabled>(options);
}

// The device of the second argument, or nullopt (and the benchmark skipped) without one.
std::optional<torch::Device> device_of(benchmark::State& state) {
  if (state.range(1) == 0) return torch::kCPU;
  if (torch::cuda::is_available()) return torch::kCUDA;
  state.SkipWithError("no CUDA device");
  return std::nullopt;
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

double seconds_of(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Times `work` eagerly and under the backend once per iteration, back to back, and sets the
// counters: <unit> medians of each, and the median of the per-pair `compare(backend, eager)`
// with its 95 % interval (the order statistics n/2 ± 0.98·√n of the sorted values).
void run_pairs(benchmark::State& state, const std::function<void()>& work, double scale, const char* unit,
               const std::function<double(double, double)>& compare, const char* compared) {
  std::vector<double> eager, backend, pairs;
  work();  // warm-up: allocator, kernels loaded
  for (auto _ : state) {
    const bool eager_first = eager.size() % 2 == 0;
    double eager_seconds = 0, backend_seconds = 0;
    if (eager_first) eager_seconds = seconds_of(work);
    {
      const auto enabled = enable(state.range(0));
      backend_seconds = seconds_of(work);
    }
    if (!eager_first) eager_seconds = seconds_of(work);
    eager.push_back(eager_seconds * scale);
    backend.push_back(backend_seconds * scale);
    pairs.push_back(compare(backend.back(), eager.back()));
  }
  if (pairs.empty()) return;
  const double n = static_cast<double>(pairs.size());
  std::sort(pairs.begin(), pairs.end());
  const auto rank = [&](double r) { return pairs[static_cast<size_t>(std::clamp(r, 0.0, n - 1))]; };
  state.counters[std::string("eager_") + unit] = median(eager);
  state.counters[std::string("backend_") + unit] = median(backend);
  state.counters[compared] = median(pairs);
  state.counters[std::string(compared) + "_low"] = rank(std::floor(n / 2 - 0.98 * std::sqrt(n)));
  state.counters[std::string(compared) + "_high"] = rank(std::ceil(n / 2 + 0.98 * std::sqrt(n)));
  state.SetLabel(kLabels[state.range(0)]);
}

void Dispatch(benchmark::State& state) {
  const std::optional<torch::Device> device = device_of(state);
  if (!device) return;
  constexpr int kCalls = 256;
  const at::Tensor x = at::ones({1}, at::TensorOptions(*device));
  run_pairs(
      state,
      [&] {
        for (int call = 0; call < kCalls; ++call) benchmark::DoNotOptimize(at::relu(x));
        synchronize(*device);
      },
      1e9 / kCalls, "ns", [](double backend, double eager) { return backend - eager; }, "extra_ns");
}
BENCHMARK(Dispatch)->ArgsProduct({{0, 1}, {0, 1}})->Iterations(2000);

void TransformerStep(benchmark::State& state) {
  const std::optional<torch::Device> device = device_of(state);
  if (!device) return;
  const bool cuda = device->is_cuda();
  torch::manual_seed(0);
  const int64_t width = cuda ? 256 : 128, layers = cuda ? 4 : 2, batch = cuda ? 32 : 8, sequence = cuda ? 128 : 64;
  torch::nn::TransformerEncoder model(torch::nn::TransformerEncoderOptions(
      torch::nn::TransformerEncoderLayerOptions(width, 8).dim_feedforward(4 * width).dropout(0.0), layers));
  model->to(*device);
  const torch::Tensor x = torch::randn({sequence, batch, width}, torch::TensorOptions(*device));
  run_pairs(
      state,
      [&] {
        model->zero_grad();
        model->forward(x).square().mean().backward();
        synchronize(*device);
      },
      1e3, "ms", [](double backend, double eager) { return backend / eager; }, "ratio");
}
BENCHMARK(TransformerStep)->ArgsProduct({{1, 2}, {0, 1}})->Iterations(300)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
