// What the backend's registration path costs (not run by CTest; run it and read the figures):
// the passthrough kernels (gallery/passthrough: each calls ATen's own operator, which the
// recursion rule routes to ATen's kernel) registered for relu, add, mul and div, against eager.
// Argument 0: eager; 1: the four functional overloads only (the registration path's own cost);
// 2: with their derived in-place and out= siblings too (add_ as add then copy_: what serving
// variants from a functional kernel costs).
//   Dispatch/*: one at::relu on a one-element CPU tensor, ns per call;
//   TransformerStep/*: a torch::nn TransformerEncoder's forward and backward on the CPU.
//   ./build_tests/tests/backendbench_backend_overhead --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <memory>

#include "backendbench/enable.h"

namespace {

const char* const kLabels[] = {"eager", "functional overloads", "with derived variants"};

std::unique_ptr<backendbench::Enabled> enable(int64_t how) {
  if (how == 0) return nullptr;
  backendbench::EnableOptions options{.check_unverified = false};
  if (how == 1) options.include = {"relu.default", "add.Tensor", "mul.Tensor", "div.Tensor"};
  return std::make_unique<backendbench::Enabled>(options);
}

void Dispatch(benchmark::State& state) {
  const auto backend = enable(state.range(0));
  const at::Tensor x = at::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(at::relu(x));
  state.SetLabel(kLabels[state.range(0)]);
}
BENCHMARK(Dispatch)->Arg(0)->Arg(1);

void TransformerStep(benchmark::State& state) {
  torch::manual_seed(0);
  torch::nn::TransformerEncoder model(
      torch::nn::TransformerEncoderOptions(torch::nn::TransformerEncoderLayerOptions(128, 8).dim_feedforward(512).dropout(0.0), 2));
  const torch::Tensor x = torch::randn({64, 8, 128});  // sequence, batch, features
  const auto backend = enable(state.range(0));
  for (auto _ : state) {
    model->zero_grad();
    model->forward(x).square().mean().backward();
  }
  state.SetLabel(kLabels[state.range(0)]);
}
BENCHMARK(TransformerStep)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
