// Timing one backend against the reference in this process (measure.h).
#include "backendbench/measure.h"

#include <c10/util/Exception.h>

#include <optional>

#include "backendbench/compare.h"
#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"
#include "backendbench/tensor_values.h"
#include "backendbench/timing.h"

namespace backendbench {
namespace {

// Writes the values of `from` into the storage of `into` (the same case, another draw): the
// whole storage of each tensor, so zero-stride views are refreshed too.
void refresh_values(const Stack& into, const Stack& from) {
  const std::vector<at::Tensor> targets = tensors_in(into), sources = tensors_in(from);
  for (size_t i = 0; i < targets.size() && i < sources.size(); ++i) {
    const at::Tensor& target = targets[i];
    const at::Tensor& source = sources[i];
    if (!target.defined() || !source.defined() || target.layout() != at::kStrided ||
        target.storage().nbytes() != source.storage().nbytes()) {
      continue;
    }
    whole_storage(target).copy_(whole_storage(source));
  }
}

}  // namespace

std::string backend_label(const Backend& backend) {
  return backend.source().empty() ? backend.name() : backend.name() + " (" + backend.source() + ")";
}

void TimedOutputSampler::offer(int batch, size_t value_set, const Stack& outputs) {
  if (newest_ && newest_->batch % stride_ == 0) {
    kept_bytes_ += stack_bytes(newest_->outputs);
    kept_.push_back(std::move(*newest_));
    while (kept_bytes_ > budget_bytes_ && kept_.size() > 1) {
      stride_ *= 2;
      std::vector<TimedOutput> thinned;
      kept_bytes_ = 0;
      for (TimedOutput& output : kept_) {
        if (output.batch % stride_ != 0) continue;
        kept_bytes_ += stack_bytes(output.outputs);
        thinned.push_back(std::move(output));
      }
      kept_ = std::move(thinned);
    }
  }
  newest_ = TimedOutput{batch, value_set, clone_inputs(outputs)};
}

std::vector<TimedOutput> TimedOutputSampler::take() {
  if (newest_) kept_.push_back(std::move(*newest_));
  newest_.reset();
  kept_bytes_ = 0;
  return std::move(kept_);
}

Measurement measure_case(const std::string& op_display, const c10::OperatorHandle& handle, const Backend& backend,
                         c10::Device device, const std::vector<Stack>& value_sets, Timer& timer, const std::string& where,
                         std::optional<uint64_t> keep_outputs_bytes) {
  const bool alone = backend.kind() == Backend::Kind::kReference;
  const OperatorFacts& facts = facts_of(op_display);
  const std::string label = backend_label(backend);
  Measurement measured;
  TimingFigures& figures = measured.figures;
  try {
    // Two draws of input values, alternating between batches and written into the same storage:
    // a result remembered from the previous batch (keyed on pointers, shapes or call counts) is
    // wrong for this one.
    size_t current = 0;
    const Stack live = clone_inputs(value_sets.at(0));
    // In-place operators write their inputs: each call gets fresh copies, made outside the timed
    // region, so every sample sees the same values.
    const bool writes_inputs = !written_arguments(handle.schema(), facts.unannotated_writes).empty();
    auto fresh = [&] { return writes_inputs ? clone_inputs(live) : live; };
    const BoundCall reference = backends().reference().bind(handle, value_sets[0], device);
    const BoundCall candidate = backend.bind(handle, value_sets[0], device);
    Stack last_reference, last_kernel;
    auto reference_kept = [&](Stack stack) { return last_reference = reference(std::move(stack)); };
    auto candidate_kept = [&](Stack stack) { return last_kernel = candidate(std::move(stack)); };
    measured.reference_outputs = reference(fresh());  // warm-up, and the outputs the roofline counts
    if (alone) {
      const Samples samples = timer.sample_one(fresh, reference);
      figures.reference_us = figures.kernel_us = samples.median_seconds() * 1e6;
      figures.kernel_mean_us = samples.mean_seconds() * 1e6;
      figures.samples = samples.count();
      figures.iqr_pct = samples.iqr_percent();
      figures.speedup = 1;
    } else {
      candidate(fresh());  // warm-up
      // After each batch: its last kernel result against its last reference result (the same
      // values), with the float64 second chance the checks give; then the other value set.
      std::string wrong_when_timed;
      const CompareOptions options = compare_options_for(facts);
      std::optional<TimedOutputSampler> kept;
      if (keep_outputs_bytes) kept.emplace(*keep_outputs_bytes);
      int batch = 0;
      timer.after_batch = [&] {
        if (kept) {
          kept->offer(batch++, current, last_kernel);
        } else if (wrong_when_timed.empty()) {
          const Stack& batch_values = value_sets[current];  // what `live` held during the batch
          const Comparison comparison =
              compare_with_second_chance(last_reference, last_kernel, options, [&, precise = std::optional<Stack>()]() mutable -> const Stack* {
                try {
                  precise = backends().reference().call(handle, to_double_precision(batch_values), device);
                } catch (const std::exception&) {
                  return nullptr;
                }
                return &*precise;
              });
          if (!comparison.equal) wrong_when_timed = comparison.message;
        }
        current = (current + 1) % value_sets.size();
        refresh_values(live, value_sets[current]);
      };
      const PairedSamples pair = timer.sample_interleaved(fresh, reference_kept, candidate_kept);
      timer.after_batch = nullptr;
      if (kept) measured.timed_outputs = kept->take();
      measured.reference_samples = pair.reference.values();
      measured.kernel_samples = pair.kernel.values();
      set_pair_figures(figures, pair);
      if (!wrong_when_timed.empty()) {
        measured.flags.push_back("wrong_when_timed");
        measured.errors.push_back(label + " on " + where + ": right when checked but wrong when timed: " + wrong_when_timed);
      }
      if (device.is_cuda()) {
        // Work on other streams fails the case; host time the events missed is added to the
        // kernel's (timing.h, HiddenWork: a many-launch kernel's and a host-computed answer's
        // look alike).
        const HiddenWork hidden = timer.hidden_work(fresh, reference, candidate, !backend.launches_from_python());
        if (hidden.on_other_streams > 0) {
          figures.hidden_work_us = hidden.on_other_streams * 1e6;
          measured.flags.push_back("hidden_work");
        } else if (hidden.on_the_host > 0) {
          figures.hidden_work_us = hidden.on_the_host * 1e6;
          const double timed_us = figures.kernel_us;
          figures.kernel_us += figures.hidden_work_us;
          figures.kernel_mean_us += figures.hidden_work_us;
          // The speedup is the mean of the pairs' ratios; scaled as the median kernel time was.
          if (figures.kernel_us > 0) scale_speedup(figures, timed_us / figures.kernel_us);
          measured.flags.push_back("host_time_added");
        }
      }
      if (figures.speedup > kSpeedupReviewThreshold) measured.flags.push_back("speedup_review");
    }
    figures.launch_overhead_us = timer.launch_overhead_seconds() * 1e6;
  } catch (const std::exception& error) {
    timer.after_batch = nullptr;
    measured.errors.push_back(label + " failed while timed on " + where + ": " + error.what());
  }
  return measured;
}

}  // namespace backendbench
