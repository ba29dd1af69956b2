// The immutable model the emitter renders: suites of operators of de-duplicated cases, the
// exclusions (as data, each with its reason) and the kernel variants found on disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "language/diagnostic.h"
#include "language/naming.h"
#include "model/schema.h"
#include "language/syntax.h"

namespace backendbench::model {

struct Case {
  std::string name;       // content-derived, unique within its operator
  std::string arguments;  // canonical argument text, as the trace printer writes it
  std::string file;       // first place the input occurs
  int line = 0;
  int64_t count = 0;      // summed over duplicates
  bool synthetic = false; // every occurrence had cnt: 0
  uint64_t seed = 0;      // derived from operator and arguments: same input, same values
  int64_t input_elements = 0;  // total elements of tensor arguments (top-N ordering)
  std::vector<std::string> models;  // models the input was traced in (trace file stems, or the dataset's in_models)
  bool overhead_dominated = false;  // the dataset's is_overhead_dominated_op
};

struct KernelVariant {
  OperatorName op;
  std::string folder;  // as on disk: relu or relu__default
  int number = 0;      // _implementation_<N>
  std::string path;    // the kernel source file (an op library: its name)
  bool is_cuda = false;
  // A test fixture's declared verdict: the regex (CMake syntax) its failure output must match, from a
  // `// expect-failure: <regex>` line in the kernel file; empty for a kernel expected to pass.
  std::string expected_failure;
  // The same for one suite only, from `// expect-failure in <suite>: <regex>` lines: a kernel that
  // passes one suite's inputs and must fail another's (the FACTO gallery).
  std::map<std::string, std::string> expected_failure_in_suite;
  // The regex of its expected failure in `suite`; empty when it must pass there.
  std::string expected_failure_for(const std::string& suite) const;
  // Set for a variant derived from a functional kernel: `op` is then the in-place or out=
  // sibling (add_.Tensor, add.out) that the kernel of `derived_from` (add.Tensor) serves
  // through a generated wrapper, which writes the result into `self` or `out`.
  std::optional<OperatorName> derived_from;
  bool is_python = false;  // a .py kernel (the original's format), called through the embedded interpreter
  // A .cu kernel in two parts (naming::cuda_kernel_has_device_part): its binding is C++ and its
  // device part a translation unit of its own.
  bool has_device_part = false;
  // Set for an operator of a Python op library (flag_gems): the backend's name; no file of its own.
  std::string op_library;

  std::string name() const { return op_library.empty() ? variant_name(number) : op_library; }
  bool is_compiled() const { return !is_python && op_library.empty(); }  // has a binding and a library
  std::string function() const { return kernel_function(folder); }
  // The variant's DispatcherKernel factory in its binding: backendbench_kernel_<op folder>_impl<N>.
  std::string binding_symbol() const;
  // Exported by a kernel's binding: its entries, under a name no other kernel's binding uses
  // (the one library holding every kernel lists them all through it).
  std::string entries_symbol() const;
};

struct Operator {
  OperatorName name;
  Schema schema;
  KernelSignature signature;
  std::vector<Case> cases;
  std::vector<KernelVariant> variants;  // directory kernels for this operator
};

struct Exclusion {
  std::string op;
  std::string arguments;
  std::string location;  // file:line
  std::string reason;
};

struct Suite {
  std::string name;
  std::vector<std::string> sources;  // trace files it was built from
  std::vector<Operator> operators;   // sorted by trace name
  std::vector<Exclusion> exclusions;
  size_t unselected = 0;  // inputs left out by top_n/bottom_n/overhead_dominated_only (a selection, not an exclusion)
};

struct SuiteOptions {
  // Exact overloads (add.Tensor, aten.add.Tensor) or base names (add: every overload whose
  // base is exactly add, so relu never selects leaky_relu). Empty: all operators.
  std::vector<std::string> op_filters;
  int top_n = 0;     // >0: keep the N inputs with most elements per operator
  int bottom_n = 0;  // >0: keep the N inputs with fewest elements (with top_n: the union)
  bool include_synthetic = false;  // cnt: 0 lines
  bool overhead_dominated_only = false;  // keep only inputs the dataset marks is_overhead_dominated_op
  // Traces recorded by an older PyTorch may name operators this libtorch no longer has
  // (aten.im2col_backward): true excludes their cases with that reason instead of failing.
  bool exclude_unknown_operators = false;
};

// Operators excluded whatever their inputs, with the reason (e.g. random operators, which
// libtorch tags nondeterministic_seeded: no reference can agree with their output). nullopt
// for every other operator.
std::optional<std::string> operator_exclusion(const OperatorName& op, const Schema& schema);

// Builds a suite from parsed traces. Unknown operators throw DiagnosticError at their
// `Operator:` line (or become exclusions, see SuiteOptions); operators whose schema the
// harness cannot bind become exclusions.
Suite build_suite(const std::string& name, const std::vector<parse::TraceFile>& traces,
                  const SchemaSource& schemas, const SuiteOptions& options,
                  const std::vector<KernelVariant>& kernels);

// A kernel folder problem: one located diagnostic, and what it leaves out of the run.
struct KernelProblem {
  Diagnostic diagnostic;
  std::string op;  // the operator whose kernel it fails (display); "" when it fails no kernel's cases
  std::vector<std::string> left_out;  // the folders and files (as found) no build or run may read
  int number = 0;  // the implementation number whose cases it fails; 0: none
};
struct FoundKernels {
  std::vector<KernelVariant> kernels;  // every kernel no problem concerns
  std::vector<KernelProblem> problems;
};

// Finds kernels per the kernel contract, and every problem a kernel folder holds, each with its
// folder or file as location: a folder naming no operator (with the nearest folder names), two
// folders naming one operator, a folder without kernel files, a kernel file whose name breaks the
// contract, two files of one implementation number (the layout each is), a path no #include can
// name, a C++ kernel for an operator the harness cannot bind; and with `check_contents`, a C++ or
// CUDA file in which nothing outside comments is named <folder>_kernel_impl, and a Python file
// that does not define it at module level. Throws DiagnosticError only when `directory` is not a
// folder.
FoundKernels find_kernels(const std::string& directory, const SchemaSource& schemas, bool check_contents);
// find_kernels' kernels, contents unchecked (such a kernel fails its own build or load, as the
// galleries' do on purpose); throws the first problem as a DiagnosticError (the generator: a
// build over a folder with a problem stops, with it; `backendbench run` leaves them out first).
std::vector<KernelVariant> discover_kernels(const std::string& directory, const SchemaSource& schemas);

// Variants the kernels serve beyond their own operator: for each kernel of a functional
// operator with one Tensor result, its in-place sibling (add.Tensor → add_.Tensor) and its
// out= sibling (add.out, or <overload>_out) when libtorch has them with the same arguments.
// A suite uses a derived variant only for an operator without kernels of its own.
std::vector<KernelVariant> derive_variants(const std::vector<KernelVariant>& kernels, const SchemaSource& schemas);

// The regex of a kernel file's `// expect-failure: <regex>` line (a fixture that must fail), or "".
std::string expected_failure_of(const std::filesystem::path& kernel_file);
// Its `// expect-failure in <suite>: <regex>` lines, by suite.
std::map<std::string, std::string> expected_failures_by_suite(const std::filesystem::path& kernel_file);

// The operators a Python op library implements, from the listing its module writes at build time
// (python -m backendbench.op_libraries --list NAME): `# key: value` header lines (device: cuda|cpu,
// unavailable: why it cannot run here) and one overload per line (add.Tensor). Overloads this
// libtorch lacks are left out. Throws DiagnosticError on a malformed line.
struct OpLibrary {
  std::string name;
  std::string unavailable;  // "" when it runs here
  std::vector<KernelVariant> operators;
};
OpLibrary read_op_library(const std::string& name, const std::string& listing_path, const SchemaSource& schemas);

// dtype/shape summary of the tensors in a case, e.g. f16_2x3_f16_3 (0-dim: f32_0d).
std::string tensor_summary(const parse::Arguments& arguments);
int64_t input_elements(const parse::Arguments& arguments);

}  // namespace backendbench::model
