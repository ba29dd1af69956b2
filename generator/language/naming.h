// The one owner of naming: operator ↔ kernel folder ↔ C++ identifier ↔ test, CTest and
// benchmark names. Every other module asks here; nothing else builds these strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace backendbench::naming {

struct OperatorName {
  std::string space = "aten";  // namespace
  std::string base;            // add, add_, relu
  std::string overload;        // Tensor, out, default

  // "aten.add.Tensor" (trace spelling); a missing overload means "default".
  static std::optional<OperatorName> from_trace(const std::string& text);
  // "add.Tensor", "aten.add.Tensor" or a bare base name "add" (bare: see default_overload).
  static std::optional<OperatorName> from_user(const std::string& text);
  // Folder per the kernel contract: "add__Tensor" → add.Tensor, "add___Tensor" → add_.Tensor
  // (decoded right to left), a bare base name "relu" → its default overload.
  static std::optional<OperatorName> from_folder(const std::string& folder);

  std::string trace_name() const;   // aten.add.Tensor
  std::string schema_name() const;  // aten::add  (overload separate, "" for default)
  std::string schema_overload() const;
  std::string display() const;      // add.Tensor — CTest and benchmark names
  std::string folder() const;       // add__Tensor — also the C++ identifier and gtest suite
  bool operator==(const OperatorName& other) const;
  bool operator<(const OperatorName& other) const;
};

// An operator filter: an exact overload (add.Tensor, aten.add.Tensor) or a base name (add: every
// overload whose base is exactly add, so relu never selects leaky_relu).
bool matches_filter(const OperatorName& op, const std::string& filter);

// The overload a bare folder or filter name means: add/mul/div/sub → Tensor, else default.
std::string default_overload(const std::string& base);

// Trace names kept for compatibility with older tracers: aten.sum.SymInt → aten.sum.dim_IntList.
std::string resolve_trace_alias(const std::string& trace_name);

// `<folder>_kernel_impl`: the function a kernel file in that folder defines.
std::string kernel_function(const std::string& folder);
// `<folder>_implementation_<N>` file stem; `implementation_number` parses one back, also the
// original's `<folder>_implementation_v<N>` (nullopt: not a kernel file).
std::string implementation_stem(const std::string& folder, int number);
std::optional<int> implementation_number(const std::string& folder, const std::string& file_stem);

// A .py kernel's device, from its source text: one that imports Triton runs on CUDA tensors; any
// other runs on the run's device (a PyTorch composition runs on either).
bool python_kernel_needs_cuda(const std::string& source_text);

// A .cu kernel in two parts: its device code (kernels and their launchers, no ATen) under
// `#ifdef BACKENDBENCH_DEVICE_PART`, compiled by nvcc with the macro defined; the rest (the host
// function, with ATen) compiled as C++ against the precompiled header. nvcc then never parses
// ATen's headers, which is most of a classic .cu kernel's 30-40 s build.
inline constexpr const char* kDevicePartMacro = "BACKENDBENCH_DEVICE_PART";
// Whether a .cu kernel's source is in two parts: a preprocessor line (#ifdef, #if defined(...),
// #ifndef) names kDevicePartMacro.
bool cuda_kernel_has_device_part(const std::string& source_text);

// Backends: the reference, or "impl<N>" for a directory kernel variant.
inline constexpr const char* kReferenceBackend = "aten";
// ./bench's calibration backends (backend.h): the reference as kernel, and the reference's work done twice.
inline constexpr const char* kSelfCalibrationBackend = "aten_self";
inline constexpr const char* kTwiceCalibrationBackend = "aten_twice";
std::string variant_name(int implementation_number);

// "part<k>of<n>" for part k of a job split in n (job.h); "" for a whole job (n = 0).
std::string part_name(int part, int parts);
// <suite>/<op>/<backend>, and /part<k>of<n> for part k of a job split in n (job.h).
std::string ctest_name(const std::string& suite, const OperatorName& op, const std::string& backend, int part = 0,
                       int parts = 0);
std::string benchmark_name(const std::string& suite, const OperatorName& op,
                           const std::string& case_name, const std::string& backend);
// A CTest entry of `backendbench run` that runs several small jobs of one suite in one process
// (a pack): <suite>/pack<k>of<n>; its verdicts go to <suite>/pack<k>of<n><extension> under the
// results folder.
std::string pack_ctest_name(const std::string& suite, int pack, int packs);
std::string pack_result_file(const std::string& suite, int pack, int packs, const std::string& extension);
// A CTest entry's result file, relative to the results folder: <suite>/<add.Tensor>/<backend><extension>,
// or <backend>.part<k>of<n><extension> for a part.
std::string result_file(const std::string& suite, const OperatorName& op, const std::string& backend,
                        const std::string& extension, int part = 0, int parts = 0);
// gtest names a case <suite>/<folder>.<backend>/<case>: the test suite <suite>/<folder>, the test
// <backend>/<case>.
std::string gtest_suite(const std::string& suite, const OperatorName& op);
std::string gtest_test(const std::string& backend, const std::string& case_name);

// A suite made of a trace file or folder of the user's: its stem with every character outside
// [A-Za-z0-9_] written _ (a leading digit gets a leading _): traces/my-model.txt → my_model.
std::string file_suite_name(const std::string& path);

// Case names: [A-Za-z0-9_], content-derived: a dtype/shape summary and a stable hash of
// the canonical argument text.
std::string case_name(const std::string& tensor_summary, const std::string& canonical_arguments);
uint64_t stable_hash(const std::string& text);  // FNV-1a 64
bool is_identifier(const std::string& text);

}  // namespace backendbench::naming
