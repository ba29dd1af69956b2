// The backend library as a C++ program uses it (backendbench/enable.h, target
// backendbench::backend): a libtorch torch::nn model, unchanged, trained for a few steps with
// the example kernels registered and without them; the outputs, the gradient of every
// parameter and the loss curve must agree, and the kernels must have run.
#include <gtest/gtest.h>

#include <torch/torch.h>
#include <unistd.h>

#include <fstream>

#include "backendbench/enable.h"
#include "backendbench/files.h"
#include "backendbench/verdict.h"

namespace backendbench {
namespace {

// A small MLP whose forward uses the operators the example kernels serve: addmm (linear),
// relu, mul, add, div.
struct Mlp : torch::nn::Module {
  Mlp() {
    first = register_module("first", torch::nn::Linear(16, 32));
    second = register_module("second", torch::nn::Linear(32, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor hidden = torch::relu(first->forward(x));
    hidden = hidden * hidden + hidden;  // mul.Tensor, add.Tensor
    return second->forward(hidden) / 2.0;  // div.Tensor (a wrapped number)
  }
  torch::nn::Linear first{nullptr}, second{nullptr};
};

struct TrainingRun {
  std::vector<double> losses;
  torch::Tensor output;
  std::vector<torch::Tensor> gradients;  // of the first step
};

// Five SGD steps from the same seed: the forward output and gradients of the first step, and
// each step's loss.
TrainingRun train() {
  torch::manual_seed(7);
  auto model = std::make_shared<Mlp>();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));
  const torch::Tensor x = torch::randn({64, 16});
  const torch::Tensor target = torch::randn({64, 4});
  TrainingRun run;
  for (int step = 0; step < 5; ++step) {
    optimizer.zero_grad();
    const torch::Tensor output = model->forward(x);
    const torch::Tensor loss = torch::mse_loss(output, target);
    loss.backward();
    if (step == 0) {
      run.output = output.detach().clone();
      for (const torch::Tensor& parameter : model->parameters()) run.gradients.push_back(parameter.grad().clone());
    }
    run.losses.push_back(loss.item<double>());
    optimizer.step();
  }
  return run;
}

bool relu_is_overridden() {
  const auto relu = c10::Dispatcher::singleton().findSchema({"aten::relu", ""});
  return relu && relu->dumpState().find("backendbench override") != std::string::npos;
}

TEST(BackendLibrary, AModelTrainsTheSameOnTheKernelsAndTheyRun) {
  const TrainingRun eager = train();
  TrainingRun on_kernels;
  {
    Enabled backend;
    EXPECT_TRUE(relu_is_overridden());
    on_kernels = train();
    const auto calls = backend.calls();
    for (const char* op : {"relu.default", "mul.Tensor", "add.Tensor", "div.Tensor"}) {
      ASSERT_TRUE(calls.count(op)) << op << " is not registered";
      EXPECT_GT(calls.at(op).kernel, 0) << op << " never ran its kernel";
    }
  }
  EXPECT_FALSE(relu_is_overridden()) << "the guard's end must remove every registration";
  EXPECT_TRUE(torch::allclose(eager.output, on_kernels.output, 1e-5, 1e-6));
  ASSERT_EQ(eager.gradients.size(), on_kernels.gradients.size());
  for (size_t i = 0; i < eager.gradients.size(); ++i) {
    EXPECT_TRUE(torch::allclose(eager.gradients[i], on_kernels.gradients[i], 1e-5, 1e-6)) << "parameter " << i;
  }
  ASSERT_EQ(eager.losses.size(), on_kernels.losses.size());
  for (size_t step = 0; step < eager.losses.size(); ++step) {
    EXPECT_NEAR(eager.losses[step], on_kernels.losses[step], 1e-5 * std::abs(eager.losses[step])) << "step " << step;
  }
}

TEST(BackendLibrary, IncludeAndExcludeChooseTheOperators) {
  {
    Enabled only_relu({.include = {"relu.default"}});
    ASSERT_EQ(only_relu.registered().size(), 2u);  // the CPU and the CUDA kernel
    EXPECT_EQ(only_relu.registered()[0].rfind("relu.default impl1 on CPU", 0), 0u) << only_relu.registered()[0];
  }
  Enabled without_relu({.exclude = {"relu"}});
  EXPECT_FALSE(relu_is_overridden());
  EXPECT_FALSE(without_relu.registered().empty());
}

TEST(BackendLibrary, AKernelFailingInTheResultsIsLeftOutUnlessForced) {
  const std::string results = files::temporary_directory() + "/bb_backend_results_" + std::to_string(::getpid());
  files::remove_tree(results);
  Verdict failed;
  failed.suite = "edge";
  failed.op = "relu.default";
  failed.backend = "impl1";
  failed.case_name = "f32_8_nan";
  failed.status = Verdict::Status::kFailed;
  failed.errors = {"output 0: 1 of 8 values differ"};
  start_verdicts(results + "/edge/relu.default/impl1.verdicts.jsonl");
  append_verdict(results + "/edge/relu.default/impl1.verdicts.jsonl", failed);
  {
    Enabled backend({.include = {"relu.default"}, .results_directory = results, .check_unverified = false});
    for (const std::string& line : backend.registered()) EXPECT_EQ(line.find("on CPU"), std::string::npos) << line;
    ASSERT_FALSE(backend.warnings().empty());
    EXPECT_NE(backend.warnings()[0].find("edge f32_8_nan: output 0: 1 of 8 values differ; not registered"),
              std::string::npos)
        << backend.warnings()[0];
  }
  Enabled forced({.include = {"relu.default"}, .results_directory = results, .force_failing = true,
                  .check_unverified = false});
  EXPECT_EQ(forced.registered()[0].rfind("relu.default impl1 on CPU", 0), 0u);
  EXPECT_NE(forced.warnings()[0].find("registered all the same (forced)"), std::string::npos);
  files::remove_tree(results);
}

TEST(BackendLibrary, WithoutResultsEachKernelIsCheckedFirst) {
  Enabled backend({.include = {"relu.default"}});
  EXPECT_GE(backend.checked_kernels(), 1);
  for (const std::string& warning : backend.warnings()) {
    EXPECT_EQ(warning.find("relu.default impl1"), std::string::npos) << "the CPU relu passed its check: " << warning;
  }
}

}  // namespace
}  // namespace backendbench
