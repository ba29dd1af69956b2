// The one owner of run-time settings: every BACKENDBENCH_* environment variable and every
// --flag of the test executables and ./bench is described in one table (settings.cpp), parsed
// once, with one rule, into a Settings value that is passed to whatever needs it. Nothing else
// reads the environment.
//
// The rule: a flag on the command line sets a value; the same setting in the environment
// overrides it (the generated CTest entries put the build's choices on the command line, and a
// user's environment at run time wins). A value that does not parse stops the run with one
// error naming the variable or flag, the value and the accepted form.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "language/job.h"

namespace backendbench {

// When sampling stops: at least `min_samples`; then as soon as the interquartile mean is known
// to `target_relative_error`, or at `max_samples`, or when `seconds_cap` of wall time is spent.
struct StoppingRule {
  int min_samples = 20;
  int max_samples = 2000;
  double target_relative_error = 0.003;
  double seconds_cap = 0.1;

  bool done(const std::vector<double>& values, double seconds_spent) const;
};

// How samples are laid out on a CUDA device.
struct SamplingLayout {
  enum class Flush { kWrite, kRead };
  // kRead sums the flush buffer, which leaves the L2 full of clean lines. kWrite zeroes it, as
  // triton.testing.do_bench does, which leaves dirty ones: the call after the flush then pays
  // for writing them back, and a second call in the same sample does not.
  Flush flush = Flush::kRead;
  int64_t flush_bytes = int64_t{128} << 20;
  int batch_pairs = 4;  // samples (pairs, when interleaved) queued before one synchronisation

  // triton.testing.do_bench's layout: a 256 MiB write before each sample, and samples queued
  // back to back (64 pairs per synchronisation). Its times agree with do_bench's; the default
  // layout reads lower on small kernels, which do_bench charges for the flush's dirty lines
  // and for a GPU kept busy without pause.
  static SamplingLayout do_bench();
};

struct Settings {
  // Correctness.
  std::optional<c10::Device> device;  // where the aten backend runs; nullopt: CUDA when available
  int draws = 2;                      // independent input draws per kernel case
  int case_timeout_seconds = 0;       // per case inside a test executable; 0: none
  double cpu_f16_gflop_limit = 2;     // CPU f16 GEMMs/convolutions above it are skipped; 0: none
  uint64_t salt = 0;                  // mixed into every draw; random per run unless given
  bool salt_given = false;
  // The strict policy: a kernel whose work ATen's computing operators do fails (the
  // kernels_must_compute check); off, the share is only recorded (Verdict::aten_share).
  bool kernels_must_compute = false;
  std::string verdicts_path;          // where a front-end appends its verdicts (JSON Lines); "": nowhere
  std::string kernel_manifest;        // loaded instead of the build's; "": the build's
  // Kernel workers (kernel_workers.h) run in a bubblewrap sandbox (sandbox.h); false only when the
  // user asks (BACKENDBENCH_SANDBOX=none): kernels still run in workers, unsandboxed.
  bool sandbox = true;
  // On CUDA, a run back to back's inputs reach the kernel worker in device memory the supervisor
  // writes while the worker's processes are locked (device_share.h: DeviceMemoryFile,
  // ProcessLocks), where the machine allows, instead of being made by the worker from a recipe
  // (BACKENDBENCH_CUDA_RUN_INPUTS=recipe turns it off).
  bool cuda_run_inputs_shared = true;
  // The GPU CTest's resource allocation bound this process to (gpu_slot.h); "": none.
  std::string gpu;
  // What to run (language/job.h): --backendbench_job's value (a job's JSON, or a JSON Lines file
  // of jobs), read by start_run into `jobs`; none: every case of every backend.
  std::string job_argument;
  std::vector<Job> jobs;
  // A test executable that serves check jobs read from its standard input (job_service.h): the
  // folder under which their kernel manifests lie; "": it runs its tests once.
  std::string serve_root;
  // A served executable that answers CTest entries (backendbench-entry) on this abstract Unix
  // socket (language/job.h: served_entry_address) instead of requests on its standard input,
  // until its standard input closes; "": none. Without serve_root it keeps no spare worker.
  std::string listen_address;
  bool serves() const { return !serve_root.empty() || !listen_address.empty(); }
  // Whether a served executable's spare worker, once a job takes it, is replaced at once rather
  // than once the job is answered (kernel_workers.h: replaces_spare_at_once); nullopt: by the cores.
  std::optional<bool> early_spare;
  // Whether a served executable's first spare worker starts Python (and Triton on a GPU): its
  // planner knows the candidates' language before the first one comes; later spares follow the
  // last request's kernels.
  bool first_spare_python = false;
  // Timing (./bench).
  SamplingLayout layout;
  StoppingRule stopping;
  double peak_gbps = 0;    // 0: from the table of known GPUs
  double peak_tflops = 0;  // 0: from the table of known GPUs
  // Where this machine's measured CPU peaks are kept (roofline.h: cpu_peaks); "none": no CPU
  // peaks. Unset: $XDG_CACHE_HOME/backendbench/cpu_peaks.json, or under $HOME/.cache.
  std::string cpu_peaks_path;
  bool calibration = false;
  std::string summary_path;
  // ./bench's own worker processes (set by ./bench, not by users): a worker runs benchmarks,
  // writes each one's name to `progress_path` before running it, and leaves out those listed
  // in `skip_path`; the supervising ./bench restarts it after a crash or a CUDA fault.
  bool worker = false;
  std::string progress_path, skip_path;
};

// One located error: "<where>: error: <what>; expected <form>".
class SettingsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which executable is parsing: each lists (in --help) and accepts only its own settings.
enum class Frontend { kTests, kBench };

// One entry of the table, for --help and the README.
struct SettingDescription {
  std::string variable;  // BACKENDBENCH_DRAWS
  std::string flag;      // --backendbench_draws ("" for none)
  std::string accepted;  // "an integer of at least 1"
  std::string meaning;
  std::string default_text;
};
std::vector<SettingDescription> describe_settings(Frontend frontend);
std::string settings_help(Frontend frontend);
// Every setting of the table as a Markdown table (variable and flag, who reads it, what it
// accepts, its meaning and default): the reference in docs/settings.md, which a test keeps equal.
std::string settings_reference_markdown();

// Reads the environment through `getenv` (std::getenv by default) and the command line, and
// removes the flags it recognises from argv. `--help` is left for the front-end's framework.
// Throws SettingsError on the first value that does not parse. The salt, when not given, is
// drawn from std::random_device.
using Getenv = std::function<const char*(const char*)>;
Settings parse_settings(Frontend frontend, int& argc, char** argv, const Getenv& getenv = nullptr);

// The device the aten backend runs on: Settings::device, or CUDA when available.
c10::Device reference_device(const Settings& settings);
bool cuda_available();
// The GPUs libtorch sees here (0 without CUDA), and the CUDA runtime it was built with as
// major * 1000 + minor * 10 (0 without CUDA): so that the planner's files need no ATen header.
int cuda_device_count();
long cuda_runtime_version();

// salt_text and parse_salt, the salt's one textual form: language/job.h.

}  // namespace backendbench
