// Time and memory of the trace parser and the JSON reader against input size, on the shapes
// hostile input takes (issue 12): long values lists, long generic lists, many keywords, many
// lines, deep-but-legal nesting, many JSON records. Google Benchmark fits the time to O(N)
// (`_BigO`, `_RMS`); the counter `peak_bytes_per_input_byte` is the most heap memory live at
// once during a parse, divided by the input's size (this binary counts every allocation).
//   build-dev/generator/tests/backendbench_parse_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "language/parser.h"

namespace {

std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};

void* counted_allocation(size_t size) {
  void* memory = std::malloc(size == 0 ? 1 : size);
  if (memory == nullptr) throw std::bad_alloc();
  const int64_t now = live_bytes += static_cast<int64_t>(malloc_usable_size(memory));
  int64_t peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
  return memory;
}

void counted_release(void* memory) {
  if (memory == nullptr) return;
  live_bytes -= static_cast<int64_t>(malloc_usable_size(memory));
  std::free(memory);
}

}  // namespace

void* operator new(size_t size) { return counted_allocation(size); }
void* operator new[](size_t size) { return counted_allocation(size); }
void operator delete(void* memory) noexcept { counted_release(memory); }
void operator delete[](void* memory) noexcept { counted_release(memory); }
void operator delete(void* memory, size_t) noexcept { counted_release(memory); }
void operator delete[](void* memory, size_t) noexcept { counted_release(memory); }

namespace {

using backendbench::parse::parse_dataset_json;
using backendbench::parse::parse_trace;

std::string repeated(const std::string& item, int64_t count) {
  std::string text;
  text.reserve(item.size() * count);
  for (int64_t i = 0; i < count; ++i) text += item;
  return text;
}

std::string case_line(const std::string& arguments) { return "Operator: aten.relu.default\ncnt: 1, " + arguments + "\n"; }

template <typename Parse>
void measure(benchmark::State& state, const std::string& input, Parse parse) {
  int64_t peak = 0;
  for (auto _ : state) {
    const int64_t before = live_bytes.load();
    peak_bytes = before;
    auto result = parse(input);
    benchmark::DoNotOptimize(result);
    if (!result.errors.empty()) state.SkipWithError(result.errors[0].str().c_str());
    peak = std::max(peak, peak_bytes.load() - before);
  }
  state.SetComplexityN(static_cast<int64_t>(input.size()));
  state.SetBytesProcessed(static_cast<int64_t>(input.size()) * state.iterations());
  state.counters["peak_bytes_per_input_byte"] = static_cast<double>(peak) / static_cast<double>(input.size());
}

auto as_trace = [](const std::string& text) { return parse_trace(text, "bench.txt"); };

void ValuesList(benchmark::State& state) {
  const int64_t n = state.range(0);
  measure(state, case_line("((T([" + std::to_string(n) + "], f32, values=[" + repeated("1.5, ", n) + "]),), {})"), as_trace);
}

void GenericList(benchmark::State& state) {
  measure(state, case_line("(([" + repeated("1, ", state.range(0)) + "],), {})"), as_trace);
}

void Keywords(benchmark::State& state) {
  std::string keywords;
  for (int64_t i = 0; i < state.range(0); ++i) keywords += "'k" + std::to_string(i) + "': 1, ";
  measure(state, case_line("((), {" + keywords + "})"), as_trace);
}

void TraceLines(benchmark::State& state) {
  measure(state,
          "Operator: aten.add.Tensor\n" +
              repeated("cnt: 3, ((T([8, 512], f16, stride=(512, 1)), T([512], f16)), {'alpha': 2})\n", state.range(0)),
          as_trace);
}

void NestedLists(benchmark::State& state) {  // 60 levels, the limit is 64
  const std::string nested = std::string(60, '[') + "1" + std::string(60, ']');
  measure(state, "Operator: aten.relu.default\n" + repeated("cnt: 1, ((" + nested + ",), {})\n", state.range(0)), as_trace);
}

void JsonRecords(benchmark::State& state) {
  measure(state,
          repeated("{\"op_name\": \"aten.add.Tensor\", \"args\": \"((T([8, 512], f16), T([512], f16)), {})\", \"count\": 3, "
                   "\"in_models\": [\"a\", \"b\"]}\n",
                   state.range(0)),
          [](const std::string& text) { return parse_dataset_json(text, "bench.jsonl"); });
}

BENCHMARK(ValuesList)->RangeMultiplier(4)->Range(1 << 10, 1 << 20)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);
BENCHMARK(GenericList)->RangeMultiplier(4)->Range(1 << 10, 1 << 18)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);
BENCHMARK(Keywords)->RangeMultiplier(4)->Range(1 << 10, 1 << 18)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);
BENCHMARK(TraceLines)->RangeMultiplier(4)->Range(1 << 8, 1 << 16)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);
BENCHMARK(NestedLists)->RangeMultiplier(4)->Range(1 << 6, 1 << 14)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);
BENCHMARK(JsonRecords)->RangeMultiplier(4)->Range(1 << 8, 1 << 16)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
