// The settings table and its one parsing rule; see settings.h.
#include "backendbench/settings.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

namespace backendbench {

SamplingLayout SamplingLayout::do_bench() {
  SamplingLayout layout;
  layout.flush = Flush::kWrite;
  layout.flush_bytes = int64_t{256} << 20;
  layout.batch_pairs = 64;
  return layout;
}

namespace {

struct Setting {
  const char* variable;
  const char* flag;  // without the leading "--"; nullptr: environment only
  std::vector<Frontend> frontends;
  const char* accepted;
  const char* meaning;
  const char* default_text;
  // Applies a value; returns false when it does not parse.
  std::function<bool(Settings&, const std::string&)> apply;
};

// Whole-string parses: "12abc", "", " 3" and out-of-range values are rejected.
std::optional<long long> parse_integer(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return value;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(value)) return std::nullopt;
  return value;
}

auto integer_at_least(long long minimum, int Settings::*field) {
  return [minimum, field](Settings& settings, const std::string& text) {
    const auto value = parse_integer(text);
    if (!value || *value < minimum || *value > 1000000000) return false;
    settings.*field = static_cast<int>(*value);
    return true;
  };
}

auto number_at_least(double minimum, bool inclusive, double Settings::*field) {
  return [=](Settings& settings, const std::string& text) {
    const auto value = parse_number(text);
    if (!value || (inclusive ? *value < minimum : *value <= minimum)) return false;
    settings.*field = *value;
    return true;
  };
}

// A file path (not empty).
auto path_into(std::string Settings::*field) {
  return [field](Settings& settings, const std::string& text) {
    if (text.empty()) return false;
    settings.*field = text;
    return true;
  };
}

// '0' or '1'; a bare flag (empty value) means 1.
auto switch_into(bool Settings::*field) {
  return [field](Settings& settings, const std::string& text) {
    if (text != "0" && text != "1" && !text.empty()) return false;
    settings.*field = text != "0";
    return true;
  };
}

const std::vector<Setting>& settings_table() {
  using F = Frontend;
  static const std::vector<Setting> table = {
      {"BACKENDBENCH_DEVICE", nullptr, {F::kTests, F::kBench}, "'cpu', 'cuda' or 'cuda:<index>'",
       "where the aten backend runs", "cuda when a CUDA device is present, else cpu",
       [](Settings& s, const std::string& text) {
         if (text != "cpu" && text != "cuda" && text.rfind("cuda:", 0) != 0) return false;
         try {
           s.device = c10::Device(text);
         } catch (const std::exception&) {
           return false;
         }
         return true;
       }},
      {"BACKENDBENCH_DRAWS", "backendbench_draws", {F::kTests, F::kBench}, "an integer of at least 1",
       "independent input draws per kernel case (a kernel must be right on each)", "2",
       integer_at_least(1, &Settings::draws)},
      {"BACKENDBENCH_KERNELS_MUST_COMPUTE", "backendbench_kernels_must_compute", {F::kTests, F::kBench}, "0 or 1",
       "fail a kernel that calls ATen operators that compute (high-level PyTorch doing its work) instead of computing "
       "its answer itself; allocating, viewing, filling and copying are allowed. Off, each verdict still records the "
       "share of the kernel's time in them (aten_share)",
       "0", switch_into(&Settings::kernels_must_compute)},
      {"BACKENDBENCH_CASE_TIMEOUT", "case-timeout", {F::kTests}, "a whole number of seconds, 0 for none",
       "timeout of one case (all its draws); the entry fails naming the case", "the build's, 120",
       integer_at_least(0, &Settings::case_timeout_seconds)},
      {"BACKENDBENCH_CPU_F16_GFLOP_LIMIT", "backendbench_cpu_f16_gflop_limit", {F::kTests, F::kBench},
       "a number of GFLOP of at least 0 (0: no limit)",
       "CPU f16 matrix products and convolutions above it are skipped with their reason", "2",
       number_at_least(0, true, &Settings::cpu_f16_gflop_limit)},
      {"BACKENDBENCH_SALT", "backendbench_salt", {F::kTests, F::kBench},
       "an unsigned 64-bit integer, decimal or 0x-hexadecimal",
       "mixed into every input draw, so answers cannot be precomputed from the known seeds; printed at start, "
       "set it to replay a run exactly",
       "random per run",
       [](Settings& s, const std::string& text) {
         const auto salt = parse_salt(text);
         if (!salt) return false;
         s.salt = *salt;
         s.salt_given = true;
         return true;
       }},
      {"BACKENDBENCH_VERDICTS", "backendbench_verdicts", {F::kTests, F::kBench}, "a file path",
       "append one verdict per case to this file (JSON Lines, schema in docs/schemas.md)", "none (CTest entries: "
       "results/<suite>/<operator>/<backend>.verdicts.jsonl)",
       path_into(&Settings::verdicts_path)},
      {"BACKENDBENCH_KERNEL_MANIFEST", "backendbench_kernel_manifest", {F::kTests, F::kBench}, "a file path",
       "load the kernels this manifest lists instead of the build's (one library path, `python <file>` or "
       "`op-library <name> <listing>` per line): how the llm backends check a candidate built alone",
       "the build's kernel manifest", path_into(&Settings::kernel_manifest)},
      {"BACKENDBENCH_JOB", "backendbench_job", {F::kTests, F::kBench},
       "a backendbench-job JSON object, or the path of a JSON Lines file of them (docs/schemas.md, Jobs)",
       "run only these jobs' cases (each job: suite, operator, backend, cases, mode, salt, draws, device); how CTest "
       "entries, `backendbench run` and the llm backends say what to run, in place of name filters",
       "every case of every backend", path_into(&Settings::job_argument)},
      {"BACKENDBENCH_SERVE", "backendbench_serve", {F::kTests, F::kBench}, "an absolute folder path",
       "serve jobs, one request per line on standard input, until it closes (docs/schemas.md, Jobs; how the llm backends "
       "check and time candidates): check jobs in a test executable, time jobs in ./bench; spare kernel workers "
       "see this folder, under which the requests' kernel manifests lie, read-only",
       "run the tests (or benchmarks) once",
       [](Settings& s, const std::string& text) {
         if (text.empty() || text[0] != '/') return false;
         s.serve_root = text;
         return true;
       }},
      {"BACKENDBENCH_LISTEN", "backendbench_listen", {F::kTests},
       "an abstract Unix socket's name of 1 to 100 characters",
       "serve check jobs to CTest entries (backendbench-entry) connecting to this socket, one at a time, until "
       "standard input closes (how `backendbench run` keeps one supervisor per GPU slot across its entries); with "
       "--backendbench_serve, spare kernel workers see that folder",
       "run the tests once",
       [](Settings& s, const std::string& text) {
         if (text.empty() || text.size() > 100) return false;
         s.listen_address = text;
         return true;
       }},
      {"BACKENDBENCH_EARLY_SPARE", "backendbench_early_spare", {F::kTests, F::kBench}, "'auto', 'on' or 'off'",
       "a served executable's spare kernel worker, once a job takes it, is replaced at once (on) or once the job is "
       "answered (off): at once, a candidate coming sooner than a spare starts does not wait for it, but the new "
       "spare's start of libtorch (and Python) takes a core from the job",
       "auto: on where this process may use at least 8 cores",
       [](Settings& s, const std::string& text) {
         if (text != "auto" && text != "on" && text != "off") return false;
         s.early_spare = text == "auto" ? std::nullopt : std::optional<bool>(text == "on");
         return true;
       }},
      {"BACKENDBENCH_FIRST_SPARE", "backendbench_first_spare", {F::kTests, F::kBench}, "'cpp' or 'python'",
       "a served executable's first spare kernel worker starts libtorch alone (cpp) or Python as well, with Triton on "
       "a GPU (python); later spares follow the last request's kernels",
       "cpp",
       [](Settings& s, const std::string& text) {
         if (text != "cpp" && text != "python") return false;
         s.first_spare_python = text == "python";
         return true;
       }},
      {"BACKENDBENCH_SANDBOX", "backendbench_sandbox", {F::kTests, F::kBench}, "'bwrap' or 'none'",
       "kernels run in worker processes sandboxed by bubblewrap (no keys, no network, read-only files but their "
       "scratch); 'none' runs the workers unsandboxed, for machines without user namespaces (say so where you report)",
       "bwrap",
       [](Settings& s, const std::string& text) {
         if (text != "bwrap" && text != "none") return false;
         s.sandbox = text == "bwrap";
         return true;
       }},
      {"BACKENDBENCH_CUDA_RUN_INPUTS", "backendbench_cuda_run_inputs", {F::kTests, F::kBench}, "'recipe' or 'shared'",
       "on CUDA, the inputs of the supervisor's runs back to back are written by the supervisor into device memory "
       "it shares while the driver locks the worker's processes (shared: nothing of the kernel's sees them before "
       "the clock starts, and a kernel left running on the GPU is refused the run; the path's own cost, timed before "
       "the kernel loads, is taken off each run), or made by the kernel's worker from a recipe (recipe: what it does "
       "with them before the clock starts is bounded by the run's floor alone; also where the machine cannot share "
       "memory or lock processes; docs/threat-model.md)",
       "shared",
       [](Settings& s, const std::string& text) {
         if (text != "recipe" && text != "shared") return false;
         s.cuda_run_inputs_shared = text == "shared";
         return true;
       }},
      {"BACKENDBENCH_LAYOUT", "backendbench_layout", {F::kBench}, "'default' or 'do_bench'",
       "sampling layout: do_bench copies triton.testing.do_bench's (256 MiB write flush, 64 pairs per batch); "
       "applied before the single-field settings below",
       "default",
       [](Settings& s, const std::string& text) {
         if (text != "default" && text != "do_bench") return false;
         const SamplingLayout chosen = text == "do_bench" ? SamplingLayout::do_bench() : SamplingLayout();
         s.layout = chosen;
         return true;
       }},
      {"BACKENDBENCH_FLUSH", "backendbench_flush", {F::kBench}, "'read' or 'write'",
       "how the L2 flush before each CUDA sample passes over its buffer", "read",
       [](Settings& s, const std::string& text) {
         if (text != "read" && text != "write") return false;
         s.layout.flush = text == "write" ? SamplingLayout::Flush::kWrite : SamplingLayout::Flush::kRead;
         return true;
       }},
      {"BACKENDBENCH_FLUSH_MIB", "backendbench_flush_mib", {F::kBench}, "an integer number of MiB of at least 1",
       "size of the L2 flush buffer", "128",
       [](Settings& s, const std::string& text) {
         const auto value = parse_integer(text);
         if (!value || *value < 1 || *value > (int64_t{1} << 20)) return false;
         s.layout.flush_bytes = static_cast<int64_t>(*value) << 20;
         return true;
       }},
      {"BACKENDBENCH_BATCH_PAIRS", "backendbench_batch_pairs", {F::kBench}, "an integer of at least 1",
       "samples (pairs) queued before one synchronisation", "4",
       [](Settings& s, const std::string& text) {
         const auto value = parse_integer(text);
         if (!value || *value < 1 || *value > 1000000) return false;
         s.layout.batch_pairs = static_cast<int>(*value);
         return true;
       }},
      {"BACKENDBENCH_BENCH_TARGET_ERROR", "backendbench_bench_target_error", {F::kBench},
       "a relative error above 0, such as 0.003", "stop sampling when the speedup is known to this", "0.003",
       [](Settings& s, const std::string& text) {
         const auto value = parse_number(text);
         if (!value || *value <= 0) return false;
         s.stopping.target_relative_error = *value;
         return true;
       }},
      {"BACKENDBENCH_BENCH_MAX_SAMPLES", "backendbench_bench_max_samples", {F::kBench}, "an integer of at least 1",
       "most samples per case", "2000",
       [](Settings& s, const std::string& text) {
         const auto value = parse_integer(text);
         if (!value || *value < 1 || *value > 100000000) return false;
         s.stopping.max_samples = static_cast<int>(*value);
         return true;
       }},
      {"BACKENDBENCH_BENCH_SECONDS", "backendbench_bench_seconds", {F::kBench}, "a number of seconds above 0",
       "wall-time cap of sampling per case", "0.1",
       [](Settings& s, const std::string& text) {
         const auto value = parse_number(text);
         if (!value || *value <= 0) return false;
         s.stopping.seconds_cap = *value;
         return true;
       }},
      {"BACKENDBENCH_PEAK_GBPS", "backendbench_peak_gbps", {F::kBench}, "a bandwidth in GB/s above 0",
       "memory bandwidth peak for the roofline counters", "from the table of known GPUs",
       number_at_least(0, false, &Settings::peak_gbps)},
      {"BACKENDBENCH_PEAK_TFLOPS", "backendbench_peak_tflops", {F::kBench}, "a rate in TFLOP/s above 0",
       "compute peak for the roofline counters", "from the table of known GPUs",
       number_at_least(0, false, &Settings::peak_tflops)},
      {"BACKENDBENCH_CPU_PEAKS", "backendbench_cpu_peaks", {F::kBench}, "a file path, or 'none'",
       "where this machine's CPU peaks for the roofline counters are kept: its memory bandwidth and f32 compute, "
       "measured by a short benchmark on first need (about a second) and kept per CPU model, core and thread "
       "count; shares of peak, not a bound ('none': no CPU peaks)",
       "$XDG_CACHE_HOME/backendbench/cpu_peaks.json ($HOME/.cache/... without it)",
       path_into(&Settings::cpu_peaks_path)},
      {"BACKENDBENCH_CALIBRATION", "backendbench_calibration", {F::kBench}, "'0' or '1' (a bare flag means 1)",
       "add the calibration backends aten_self and aten_twice", "0",
       switch_into(&Settings::calibration)},
      {"BACKENDBENCH_SUMMARY", "backendbench_summary", {F::kBench}, "a file path",
       "write the score summary, every case included, as JSON", "none",
       path_into(&Settings::summary_path)},
      {"BACKENDBENCH_WORKER", "backendbench_worker", {F::kBench}, "'0' or '1' (a bare flag means 1)",
       "run as a worker of a supervising ./bench (set by ./bench itself)", "0",
       switch_into(&Settings::worker)},
      {"BACKENDBENCH_PROGRESS", "backendbench_progress", {F::kBench}, "a file path",
       "a worker writes each benchmark's case here, as a job of that case, before running it (set by ./bench itself)", "none",
       path_into(&Settings::progress_path)},
      {"BACKENDBENCH_SKIP", "backendbench_skip", {F::kBench}, "a file path",
       "a worker leaves out the cases this file lists, as jobs of one case (set by ./bench itself)", "none",
       path_into(&Settings::skip_path)},
  };
  return table;
}

bool used_by(const Setting& setting, Frontend frontend) {
  for (Frontend f : setting.frontends) {
    if (f == frontend) return true;
  }
  return false;
}

std::string shortened(const std::string& text) { return text.size() > 80 ? text.substr(0, 77) + "..." : text; }

[[noreturn]] void reject(const std::string& where, const std::string& value, const Setting& setting) {
  throw SettingsError(where + ": error: '" + shortened(value) + "' is not a valid value of " + setting.variable +
                      "; expected " + setting.accepted);
}

}  // namespace

bool cuda_available() {
  static const bool available = c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA) &&
                                c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->deviceCount() > 0;
  return available;
}

int cuda_device_count() { return cuda_available() ? static_cast<int>(at::detail::getCUDAHooks().getNumGPUs()) : 0; }

long cuda_runtime_version() {
  return at::detail::getCUDAHooks().hasCUDA() ? at::detail::getCUDAHooks().versionCUDART() : 0;
}

c10::Device reference_device(const Settings& settings) {
  if (settings.device) return *settings.device;
  return cuda_available() ? c10::Device(c10::DeviceType::CUDA, 0) : c10::Device(c10::DeviceType::CPU);
}

std::vector<SettingDescription> describe_settings(Frontend frontend) {
  std::vector<SettingDescription> descriptions;
  for (const Setting& setting : settings_table()) {
    if (!used_by(setting, frontend)) continue;
    descriptions.push_back({setting.variable, setting.flag ? std::string("--") + setting.flag : std::string(),
                            setting.accepted, setting.meaning, setting.default_text});
  }
  return descriptions;
}

std::string settings_help(Frontend frontend) {
  std::ostringstream out;
  out << "backendbench settings (a flag sets a value; the environment variable overrides it):\n";
  for (const SettingDescription& d : describe_settings(frontend)) {
    out << "  " << d.variable << (d.flag.empty() ? "" : ", " + d.flag + "=VALUE") << "\n      " << d.meaning
        << ".\n      Accepts " << d.accepted << "; default: " << d.default_text << ".\n";
  }
  return out.str();
}

std::string settings_reference_markdown() {
  // A '|' in a cell would end it.
  const auto cell = [](const std::string& text) {
    std::string escaped;
    for (char c : text) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
    return escaped;
  };
  std::ostringstream out;
  out << "| variable (flag) | read by | accepts | meaning | default |\n|---|---|---|---|---|\n";
  for (const Setting& setting : settings_table()) {
    std::string readers;
    for (Frontend f : setting.frontends) readers += std::string(readers.empty() ? "" : ", ") + (f == Frontend::kTests ? "tests" : "bench");
    out << "| `" << setting.variable << "`" << (setting.flag ? std::string(" (`--") + setting.flag + "`)" : std::string()) << " | "
        << readers << " | " << cell(setting.accepted) << " | " << cell(setting.meaning) << " | " << cell(setting.default_text)
        << " |\n";
  }
  return out.str();
}

Settings parse_settings(Frontend frontend, int& argc, char** argv, const Getenv& getenv) {
  Settings settings;
  const Getenv read = getenv ? getenv : [](const char* name) -> const char* { return std::getenv(name); };
  // Flags first, removed from argv as they are recognised; then the environment overrides.
  // Settings apply in table order, so BACKENDBENCH_LAYOUT comes before the fields it sets.
  std::vector<std::optional<std::pair<std::string, std::string>>> from_flags(settings_table().size());
  int kept = argc > 0 ? 1 : 0;
  for (int i = kept; i < argc; ++i) {
    const std::string argument = argv[i];
    bool recognised = false;
    for (size_t s = 0; s < settings_table().size() && !recognised; ++s) {
      const Setting& setting = settings_table()[s];
      if (setting.flag == nullptr) continue;
      const std::string flag = std::string("--") + setting.flag;
      std::optional<std::string> value;
      if (argument == flag) {
        value = "";
      } else if (argument.rfind(flag + "=", 0) == 0) {
        value = argument.substr(flag.size() + 1);
      }
      if (!value) continue;
      recognised = true;
      const std::string where = "command line: argument " + std::to_string(i) + " (" + flag + ")";
      if (!used_by(setting, frontend)) {
        throw SettingsError(where + ": error: " + flag + " is not a setting of this executable; expected one of those "
                            "--help lists");
      }
      from_flags[s] = std::make_pair(where, *value);
    }
    if (!recognised) argv[kept++] = argv[i];
  }
  argc = kept;
  for (size_t s = 0; s < settings_table().size(); ++s) {
    const Setting& setting = settings_table()[s];
    std::optional<std::pair<std::string, std::string>> chosen = from_flags[s];
    if (used_by(setting, frontend)) {
      if (const char* value = read(setting.variable)) {
        chosen = std::make_pair(std::string("environment: ") + setting.variable, std::string(value));
      }
    }
    if (chosen && !setting.apply(settings, chosen->second)) reject(chosen->first, chosen->second, setting);
  }
  settings.stopping.min_samples = std::min(settings.stopping.min_samples, settings.stopping.max_samples);
  if (settings.cpu_peaks_path.empty()) {
    const char* cache = read("XDG_CACHE_HOME");
    const char* home = read("HOME");
    if (cache != nullptr && cache[0] == '/') {
      settings.cpu_peaks_path = std::string(cache) + "/backendbench/cpu_peaks.json";
    } else if (home != nullptr && home[0] == '/') {
      settings.cpu_peaks_path = std::string(home) + "/.cache/backendbench/cpu_peaks.json";
    } else {
      settings.cpu_peaks_path = "none";
    }
  }
  if (!settings.salt_given) settings.salt = (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  return settings;
}

}  // namespace backendbench
