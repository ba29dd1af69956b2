// Kernel workers, as the supervisor sees them: kernel code runs only in them (worker/serve.h),
// never in the process that computes the reference, compares, writes verdicts or decides an exit
// status (the supervisor).
//
// start_kernel_workers(manifest, settings) starts one worker per manifest line
// the jobs need (one kernel library, Python kernel or op library each: no two kernels ever share
// a process, so nothing one does at load, at call or at exit reaches another's verdict), asks
// each which kernels its line registers and adds one WorkerBackend per kernel to backends(). Each call of such a
// backend sends the inputs (made and kept by the supervisor; where it made them from a case,
// only how, and the worker makes the same values itself) to the worker and receives the
// outputs, the inputs as the call left them, and what the call's own process saw (observe.h);
// the supervisor then runs every check on its own copy. Workers are started on first use, one
// per manifest line and device class (CPU work sees no GPU device files), sandboxed (sandbox.h) unless
// Settings::sandbox is none; a worker that crashes, hangs past the case timeout, faults or
// breaks the protocol is stopped, the case fails with its last output, and the next case
// starts a new one.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "backendbench/backend.h"
#include "backendbench/measure.h"
#include "backendbench/roofline.h"
#include "backendbench/settings.h"
#include "protocol/worker_protocol.h"
#include "backendbench/spare_policy.h"

namespace backendbench {

// Starts the workers of `manifest` that `settings.jobs` need (the lines holding their kernels,
// kernel_imports.h: kernel_manifest_line; every line for no job) and registers their kernels;
// throws std::runtime_error with the worker's own message when the only line needed does not
// load, and when the sandbox cannot be made (naming the way out: BACKENDBENCH_SANDBOX=none,
// which the command spells --no-sandbox). Where several lines are needed, one that fails leaves
// out its own kernels only, and says so on stderr.
void start_kernel_workers(const std::string& manifest, const Settings& settings);

// A supervisor that runs one job after another (job_service.h): ends the workers of the last
// manifest and forgets their kernels, so that the next start_kernel_workers begins from none.
void stop_kernel_workers();

// On a GPU only the worker asked runs: before another worker's kernel is asked, the pool locks
// every other GPU worker's processes (device_share.h: ProcessLocks; none of their CUDA calls runs
// and none allocates until their own kernel is asked again) and ends one it cannot lock (a CUDA
// call of its that does not finish; a process that holds the GPU and reports no CUDA state). The
// lock does not stop kernels already on the GPU, which the GPU would give time slices beside the
// one timed: while the GPU is busy (worker_pool.h: gpu_busy_now), the worker whose turn just
// ended is ended (every other was held since the GPU was last found idle). Then, where less than
// 1/kGpuRoomShare of the device's memory is free, it makes room with make_gpu_room: a kernel that
// takes the GPU's memory at load must not fail another's cases (its worker's start, its probe,
// its runs) or choose a weaker bound for them. Those ended start again for their own kernel's
// next case; only their time is spent.
inline constexpr uint64_t kGpuRoomShare = 2;
// Ends other GPU workers with `end(i)`, i in [0, `others`) in order (the pool's: those that took
// the most of the device's memory in their own turns first, then the least recently used),
// reading `free_and_total` (this process's reading of the device's free and total bytes, from
// outside every worker) before each, until 1/kGpuRoomShare of it is free or none is left;
// returns how many it ended.
size_t make_gpu_room(size_t others, const std::function<std::pair<uint64_t, uint64_t>()>& free_and_total,
                     const std::function<void(size_t)>& end);

// A supervisor that serves one build's entries (serve_entries in job_service.h), whose jobs name
// the same kernels one after another: from now on a job's workers outlive it. The next
// start_kernel_workers uses them again if it names the same manifest, every file it names of the
// same size and modification time, under the same sandbox; otherwise it stops them first. A
// kept worker's libtorch, CUDA context, loaded kernels and modules, caching allocator and
// device-copy slots are warm (on an H200 the 914-case subset's 10 kernel entries, served by 4
// supervisors, took 7.3-8.1 s so, against 8.6-9.3 s with a worker each). A kept worker serves its own line's kernel again, never another's.
void keep_kernel_workers_between_jobs();

// Between two jobs of such a supervisor: forgets the last job's kernels (the next
// start_kernel_workers lists them again) and says whether one of its workers still runs.
bool forget_kernels_keep_workers();

// Starts a spare worker, of the class that answers the questions about kernels, which sees
// `kernel_roots` (absolute folders) read-only and starts libtorch (and CUDA) before its job is
// known; the next start_kernel_workers whose manifest and every file it names lie under them
// loads its kernels there instead of starting a worker. Starting one replaces the last.
// `python`: it also starts Python and imports torch and Triton (start_python_kernels), for a
// job of Python kernels; a C++ job's worker would only pay for it.
void start_spare_worker(const std::vector<std::string>& kernel_roots, const Settings& settings, bool python = false);

// replaces_spare_at_once: backendbench/spare_policy.h.

// Times a worker's kernel against the reference in its worker (CUDA events must be recorded
// where the kernel runs), then judges here every timed output the worker sends (each batch's
// last, run_case.h: TimedOutputSampler) against this process's own reference on the same values
// (`wrong_when_timed`; nothing is judged in the kernel's process), and bounds what it reports by
// what this process observes: the
// samples it reports cannot add up to more time than the request took (half the samples at the
// median or above: samples/2 × (reference + kernel median) ≤ the wall time seen here), else the
// measurement fails with that reason; and the reference time the worker reports may be at most
// kReferenceAgreement times (plus kReferenceSlackUs) what this process measures of the
// reference itself, interleaved with a partner as the worker interleaves it with the kernel (on
// CUDA the reference again, under a short rule; on a CPU one core busy for the kernel's time). The roofline (time_case) bounds the kernel time from below.
inline constexpr double kReferenceAgreement = 2.0;
// On a CPU the two processes' reference timings differ more for an honest kernel: on the 2-core
// machine a single-threaded kernel's worker read a 1024x1024 relu's reference 2.3x the
// supervisor's, in every attempt, right after a build.
inline constexpr double kCpuReferenceAgreement = 4.0;
inline constexpr double kReferenceSlackUs = 2.0;
// On CUDA, on calls of kBoundedCallSeconds or more, the reference figure counted is at most
// kCudaCountedReferenceAgreement times this process's own (plus kReferenceSlackUs); a worker's
// above it is counted at that figure, the speedup with it (flag supervisor_reference_time). There
// a run back to back within the kernel's claim ends the bound without the reference's run
// (back_to_back_allowance), so a reference slowed in the kernel's process up to
// kReferenceAgreement would otherwise count in full (gallery/cuda_timing_cheats impl15 delays
// each launch of its worker's reference). Both processes time the reference alike (the L2
// flushed before each call, the same device), so this one's figure is timed for every such case;
// the allowance is the one a speedup may beat the calls back to back by (kBackToBackTolerance).
inline constexpr double kCudaCountedReferenceAgreement = 1.05;
// The reference figure counted: the worker's, at most `agreement` times this process's own plus
// kReferenceSlackUs (microseconds).
double counted_reference_us(double worker_reference_us, double own_reference_us, double agreement);
// Whether a worker's reference figure needs this process's own timing to be bounded: not when it
// is at most `agreement` times the least honest time of the reference's work (roofline.h:
// honest_floor_seconds, 0 where the peaks are no bound), plus kReferenceSlackUs, since this
// process's own figure could only be higher and the bound would hold; and always when it beats
// that floor itself, where this process's own time says whether the floor bounds anything
// (roofline.h: suspect_time).
bool reference_figure_needs_timing(double worker_reference_us, double agreement, double honest_floor_us);
// What this process counts of a kernel worker's `time` answer (its "measurement" object), since
// anything in the kernel's process can rewrite it: every figure that counts (the medians, mean,
// spreads, sample count and the speedup, the interquartile mean of the pairs' ratios) computed
// here from the interleaved pairs the worker sends (reference_samples, kernel_samples, seconds),
// as measure_case computes its own; the worker's own figures are never read. Of the worker's
// flags only those that fail a case or add to the kernel's time (wrong_when_timed, hidden_work,
// host_time_added) are kept; speedup_review is decided here. measure_in_worker then bounds the
// pairs: together they took no longer than the request. Throws std::runtime_error for a malformed
// answer: no pairs, unpaired samples, more pairs than `most_samples`, a sample that is not a
// positive number of seconds, a flag or error that is not text.
Measurement counted_measurement(const nlohmann::json& measurement, int64_t most_samples);
// A call's answer may carry at most kAnswerMultiple times the bytes of the draw's inputs and of the
// reference's outputs, plus kAnswerSlackBytes (the payload's table and structure, small outputs):
// a worker's claim of a payload beyond it is a protocol error before a byte of it is kept (a
// claimed 32 GiB was accepted and filled as it came: 1 GiB streamed took the supervisor to 2.4 GB).
inline constexpr uint64_t kAnswerMultiple = 4;
// The outputs a kernel worker's timing sends back, each batch's last (run_case.h:
// TimedOutputSampler), for this process to judge with its own reference: at most this many
// bytes of them, or twice the reference's outputs where those are larger (then two batches').
inline constexpr uint64_t kTimedOutputBudgetBytes = uint64_t{32} << 20;
inline constexpr uint64_t kAnswerSlackBytes = uint64_t{16} << 20;
// The speedup bounded on both sides by this process's clock: once its interleaved samples are
// counted, its worker calls the kernel back to back, keeping every call's outputs (prepare_run;
// run, timed here from request to answer; run_digests at once, a digest of every call's outputs,
// timed here too; run_output, every call's outputs, each matched to its digest and judged here
// with this process's reference on that call's values, worker_protocol.h), and this process calls
// the reference as many times back to back on the same values, keeping its outputs too (on a CPU
// also once before the kernel's run, on draws of its own). A kernel that skips calls (their
// outputs unfilled) fails as wrong_when_timed; one that finishes their work after its answer to
// `run` does so before its digests, and the digests' time beyond what this process's own digests
// of the fetched outputs took (kDigestAllowance) is counted as the kernel's. Each side's
// fastest of up to kBackToBackTries runs in turns counts (other work only adds time). Every call
// of a run gets a draw of its own that the kernel never saw (draws from kBackToBackFirstDraw on,
// under a salt this process draws for each run: prepare_run), so a
// kernel that keeps its outputs and replays them (a cache keyed on a fingerprint of its input
// values, filled in the checks, whose draws the samples time again) pays for every call here. So
// many calls that they last kBackToBackSeconds at the time the worker claimed, at least
// kLeastBackToBackCalls, at most kMostDistinctBackToBackCalls (each is a draw to make, here and
// in the worker), and no more draws than `budget_bytes` of inputs hold, nor outputs than it
// holds (at least 2). On a CPU the draws are made here and reach the worker in a memory file it
// maps while empty, written while every process of the worker's is stopped, right before the
// clock starts (memory_file.h): nothing of the kernel's sees a run's values untimed. On CUDA they
// are written so too, into device memory, while the driver holds the worker's processes
// (device_share.h, DeviceMemoryFile and ProcessLocks; worker_pool.h, hand_over_run_inputs), or,
// where that path is not used (BACKENDBENCH_CUDA_RUN_INPUTS=recipe, a machine that cannot share
// or lock), the worker makes them from the first's recipe, and the run's floor (below) bounds
// what it can do with them before the clock. The budget (back_to_back_budget_bytes): kBackToBackBytes on a CPU; on CUDA
// a share of the device's memory, kCudaBackToBackMemoryShare, within kBackToBackBytes and
// kMostCudaBackToBackBytes (both processes hold a run's draws and outputs: four budgets in all,
// a quarter of the device's memory; each worker hands its own back once the run's outputs are
// fetched). Calls of 100 us or more are the ones bounded on CUDA, and they move hundreds of MiB:
// under 256 MiB a 256 MiB relu got 2 calls, half a millisecond, less than the round trip's
// allowance of then (a fixed millisecond), so any claim was within it. A 16th of an H100's
// memory gives it 19 calls of 176 us, 3.3 ms, against a shared path (worker_pool.h) whose unlock
// alone varied by 0.3 ms from run to run (a 32nd gave it 9 calls, 1.6 ms).
inline constexpr double kBackToBackSeconds = 0.025;
inline constexpr int64_t kLeastBackToBackCalls = 40;
inline constexpr int64_t kMostDistinctBackToBackCalls = 4096;
static_assert(kMostDistinctBackToBackCalls <= worker::kMostBackToBackCalls);
inline constexpr uint64_t kBackToBackBytes = uint64_t{256} << 20;
inline constexpr double kCudaBackToBackMemoryShare = 1.0 / 16;
inline constexpr uint64_t kMostCudaBackToBackBytes = uint64_t{8} << 30;
uint64_t back_to_back_budget_bytes(bool cuda, uint64_t device_memory_bytes);
inline constexpr int kBackToBackFirstDraw = 1 << 20;
int64_t back_to_back_calls(double claimed_seconds, uint64_t input_bytes, uint64_t output_bytes, uint64_t budget_bytes);
// The digests of a run's outputs may take kDigestAllowance times as long as this process's own
// digests of the same outputs, fetched, took, plus kDigestSlackSeconds, before the time beyond it
// counts as the kernel's run: work finished after the answer to `run` is done before the digests
// are, and the digests, under a key the request brings, cannot be made before it. Both sides read
// every output byte once; the worker's answer adds a round trip and its digests in JSON (on the
// 2-core machine 16 digests of 16 MiB outputs took 9.8-11.1 ms there, 9.8-11.7 ms here).
inline constexpr double kDigestAllowance = 1.1;
inline constexpr double kDigestSlackSeconds = 0.001;
// The kernel's run as counted: its calls (`run_seconds`), or its calls and digests less this
// process's own digests' time where the digests took longer than kDigestAllowance allows.
double counted_run_seconds(double run_seconds, double digests_seconds, double own_digests_seconds);
// The least time a kernel's run back to back can honestly take by this process's clock: `calls`
// calls of `work` each at the machine's peaks (roofline.h: a GPU's datasheet, a CPU's measured
// figures), divided by a margin (below); the bytes count only where the run moves at least
// kRunFloorLeastBytes and `cache_bytes` (the CPU's last-level cache: a run that fits there is not
// bound by memory). A run faster than this did not do its work while the clock ran: it was done
// before, while `prepare_run` made the draws on CUDA (gallery/timing_cheats impl12 computes each
// input's relu as the worker shapes it, and its calls are lookups), and the case fails as
// timing_disagrees where the reference's run does not beat the floor too (roofline.h: a
// gather's bytes overstate its work). A CPU's measured peaks are not a bound on one call (data in
// its caches moves faster, and an honest 2048x2048 relu read 111 % of the measured bandwidth on
// the 2-core machine), hence the margin; a lookup beats the floor a hundredfold. A GPU's
// datasheet bandwidth is a bound (peaks.bound), and a run of 256 MiB or more streams from its
// memory, not its L2: there the bytes' margin is kRunFloorBoundBytesMargin (an honest 8192x8192
// relu's 9 calls on an H100 took 1.19x the datasheet's time, 1.79x the floor; a kernel that
// precomputes and waits out the floor gains at most that, where 4x gave it 4.8x). The flops keep
// kRunFloorMargin: a float kernel on tensor cores beats the datasheet's float figure.
inline constexpr double kRunFloorMargin = 4.0;
inline constexpr double kRunFloorBoundBytesMargin = 1.5;
inline constexpr double kRunFloorLeastBytes = 256.0 * (1 << 20);
double run_floor_seconds(const Work& work, int64_t calls, const Peaks& peaks, double cache_bytes);
// How many calls' outputs one `run_output` fetches: at most kRunOutputChunkBytes of them, and no
// more storages of a device's than a message's descriptors (device_share.h) allow.
inline constexpr uint64_t kRunOutputChunkBytes = uint64_t{64} << 20;
int64_t run_output_chunk(uint64_t call_output_bytes, size_t call_output_tensors);
// What the speedup both sides get back to back says of the paired one (judge_back_to_back): at
// most (1 + tolerance) times it, the paired speedup stands; beyond kBackToBackFailRatio times it
// (kCpuBackToBackFailRatio on a CPU) the worker's figures are a forgery and the case fails
// (timing_disagrees); between, the
// back-to-back figures are counted instead (flag back_to_back_time). Either way a forged time
// — the kernel's made short, or the reference's made long in the kernel's process — gains at
// most the tolerance. On CUDA cases whose kernel and reference calls are shorter than
// kBoundedCallSeconds are bounded only loosely (below): back to back they measure their launches. On
// CUDA, too, the speedups are compared only where the kernel's calls back to back took longer
// than it claims (back_to_back_allowance): the worker's samples flush the L2 before each call
// and the calls back to back do not, so a reference of a few microseconds runs from a warm
// cache there (on the H200, 29 of the 914-case subset's honest kernels of 100-160 us beside
// references of 10-40 us read 0.5-0.94x their paired speedup back to back when every case was
// compared). A reference slowed in the kernel's process is bounded there by the supervisor's own
// reference timing alone (kReferenceAgreement).
inline constexpr double kBackToBackTolerance = 0.05;
// On a CPU the two sides' back-to-back runs are noisier (on the 2-core machine the example
// relu's 1024x1024 case read 0.99-1.08x its paired speedup back to back, the timing gallery's
// honest 2048x2048 relu 1.02-1.05x): an honest kernel past the tolerance is counted by this
// process's clock, which it does not fail by. Calls shorter than kBoundedCallSeconds (by this
// process's clock, on either side) read from 0.4x to 1.5x their paired speedup back to back (the
// smoke and edge suites' example kernels, 1-8 us calls): on them a CPU's tolerance is
// kCpuShortCallBackToBackTolerance.
inline constexpr double kCpuBackToBackTolerance = 0.10;
inline constexpr double kCpuShortCallBackToBackTolerance = 0.5;
inline constexpr double kBoundedCallSeconds = 100e-6;
// CUDA calls under kBoundedCallSeconds (on either side) are bounded only loosely, and only where
// the paired speedup exceeds kCudaShortCallCheckedSpeedup: back to back they measure their
// launches and the requests' round trip (on the H200, 101 of the 874 timed cases of the 914-case
// subset, honest kernels of several launches, read 0.55x their paired speedup back to back), so
// a paired speedup stands up to twice the one both sides got back to back
// (kCudaShortCallBackToBackTolerance), is replaced by it beyond, and fails beyond
// kCudaShortCallFailRatio times it. Unbounded, the timing gallery's forgeries passed at 3.1-5.0x
// on the 64x64 relu on an H100 (2026-12-05); bounded so, they were counted at 0.93-1.35x beside
// their honest twin's 1.02x. At most kMostCudaShortCallBackToBackCalls calls (a few
// milliseconds: each is a draw to make and an output to judge).
inline constexpr double kCudaShortCallCheckedSpeedup = 1.1;
inline constexpr double kCudaShortCallBackToBackTolerance = 1.0;
inline constexpr double kCudaShortCallFailRatio = 4.0;
inline constexpr int64_t kMostCudaShortCallBackToBackCalls = 500;
// The kernel's run as compared: by this process's clock less its worker's least round trip, and
// on CUDA's shared path less that path's least cost (`least_path_seconds`, < 0 for none:
// worker_pool.h, run_inputs_path), both timed before the worker loaded kernel code (requests
// answered only then: no kernel can lengthen them), at least kLeastNetRunSeconds. At most
// kMostRoundTripSeconds and kMostRunInputsPathSeconds are taken off, and the spread allows at
// most kMostRoundTripSpreadSeconds (below): another worker's kernel that loads the machine while
// this one starts could otherwise lengthen them for it. What a kernel could gain by making its
// own path faster than the least of the probes' (the driver's unlock answered early, say) is at
// most that least, a share of the run that longer runs shrink (kCudaBackToBackMemoryShare).
inline constexpr double kLeastNetRunSeconds = 1e-9;
inline constexpr double kMostRoundTripSeconds = 200e-6;
inline constexpr double kMostRunInputsPathSeconds = 600e-6;
inline constexpr double kMostRoundTripSpreadSeconds = 100e-6;
double net_run_seconds(double run_seconds, double least_round_trip_seconds, double least_path_seconds);
// The kernel's run, less its round trip, may take (1 + kBackToBackTolerance) × calls × the
// claimed time, plus kRunSlackSeconds (the first launch, the last synchronisation, what else the
// worker does around the calls), plus kRoundTripSpreadAllowance times its round trips' spread
// (median less least), plus, on calls under kBoundedCallSeconds, up to kLaunchSlackSeconds a call
// (launch latency the events do not see), fading to none at kBoundedCallSeconds. On an H100
// (2026-12-05) the worker's round trip before load was 20-24 us (its spread 1-3 us), and an
// honest relu's run less it took 133-146 us more than its calls' paired time (9 calls of 176 us,
// 4 of 354 us); the supervisor's own reference run 30-100 us more. Before, one call's worth of
// slack and a fixed millisecond for the round trip stood here: a claim of 0.42x the truth fit.
inline constexpr double kRunSlackSeconds = 200e-6;
inline constexpr double kRoundTripSpreadAllowance = 3.0;
inline constexpr double kLaunchSlackSeconds = 10e-6;
double back_to_back_allowance(double claimed_seconds, int64_t calls, double round_trip_spread_seconds);
// Whether a run back to back within the kernel's claim ends the bound without the reference's
// run: on CUDA's bounded calls only, and not where the reference figure was counted at this
// process's own (flag supervisor_reference_time): the worker's reference read slow there, which
// the kernel's claim does not show, and this process's own figure bounds it only as closely as
// its own timing reads (gallery/cuda_timing_cheats impl16 queues a spin before each launch of
// its worker's reference: on an H100 its 8192x8192 case was counted at 1.14x so, its twin at
// 1.00x, the supervisor's reference reading 189 us against the workers' 175 us; 2026-12-06).
// Then both sides' runs are timed, and the speedup is bounded by theirs.
bool back_to_back_ends_within_claim(bool cuda, bool short_cuda_calls, bool reference_capped);
inline constexpr int kBackToBackTries = 3;
inline constexpr double kBackToBackFailRatio = 2.0;
// As kCpuReferenceAgreement: interleaved with a single-threaded kernel, ATen's thread pool sleeps
// before each reference call, and an honest kernel's paired speedup read up to 2.4x its speedup
// back to back (right after a build, on the 2-core machine); counted, it gains nothing.
inline constexpr double kCpuBackToBackFailRatio = 4.0;
enum class BackToBack { kAgrees, kCounted, kDisagrees };
// `call_seconds`: the longer side's call back to back, by this process's clock.
BackToBack judge_back_to_back(double paired_speedup, double back_to_back_speedup, double call_seconds, bool cuda);
// `drawn_from` says how each value set was made; the worker then makes them itself (nothing
// crosses but the figures); empty, the value sets are sent. `checked_outputs`: the reference's
// outputs on value_sets[0] as the checks computed them (for the roofline's floor), or nullptr.
Measurement measure_in_worker(const std::string& op_display, const c10::OperatorHandle& handle, const Backend& backend,
                              c10::Device device, const std::vector<std::vector<c10::IValue>>& value_sets,
                              const std::vector<InputDraw>& drawn_from, const Settings& settings,
                              const std::string& where, const std::vector<c10::IValue>* checked_outputs = nullptr);

}  // namespace backendbench
