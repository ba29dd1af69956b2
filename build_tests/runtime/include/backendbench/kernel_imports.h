// What a kernel's file holds, read by the supervisor (never loaded here, never asked of a
// worker): a kernel whose library imports ATen's own implementation of
// the operator it replaces (at::cpu::relu, at::native::relu, at::_ops::relu::redispatch, ...) can
// call it past the worker's observer (a redispatch below it, the observer switched off, another
// thread), so the no_fallback_imports check fails it on what it imports; and one that names such
// an entry point, or the operator itself, in its data can look it up at run time (dlsym, the
// dispatcher by name, then a redispatch below the observer), so the check fails it on that too;
// as it does a Python kernel whose source names an operator's redispatch.
#pragma once

#include <string>
#include <vector>

namespace backendbench {

class Backend;

// The file of kernel `backend` (impl<N>) of `op_display` among the lines of the kernel manifest
// `manifest` (kernel_manifests/<set>.txt): its shared library (as the build names it:
// libbackendbench_kernel_[<set>_]<folder>_implementation_<N>.so) or a Python kernel's source
// (python <kernels>/<folder>/<folder>_implementation_<N>.py), read by file name only: the kernel
// whose folder names `op_display`, or the functional operator whose kernel serves it (its
// in-place and out= siblings). "" when none does (an op library).
std::string kernel_file(const std::string& manifest, const std::string& op_display, const std::string& backend);

// The kernel manifest's non-empty lines, in order: what a worker is told to load by index.
std::vector<std::string> kernel_manifest_lines(const std::string& manifest);

// The line of `manifest` (its index among kernel_manifest_lines) that holds kernel `backend` of
// `op_display`, or -1: read from the line's text alone, as kernel_file reads a kernel's file
// name: a library line, a Python kernel's (python <kernels>/<folder>/<folder>_implementation_<N>.py)
// or an op library's (op-library <name> ...). That line's worker is the only process that loads
// the kernel (one kernel per worker: nothing one kernel does reaches another's verdict).
int kernel_manifest_line(const std::string& manifest, const std::string& op_display, const std::string& backend);

// The file a kernel backend of this process was found in (set when its worker listed it;
// kernel_file above), "" for any other backend; what the no_fallback_imports check reads.
void set_kernel_file(const Backend& backend, std::string file);
std::string kernel_file_of(const Backend& backend);
// Forgets every backend's file (their backends are being removed).
void forget_kernel_files();

// The undefined dynamic symbols of an ELF shared library, demangled. Throws std::runtime_error
// for a file that is not a 64-bit ELF object.
std::vector<std::string> undefined_symbols(const std::string& library);

// Whether the demangled symbol `symbol` is an ATen entry point of the operator family `family`
// (relu for relu.default and relu_.default, add for add.Tensor): at::cpu::, at::cuda::,
// at::native:: and the composite namespaces' functions of it (and its _out forms), or
// at::_ops::<its overload>::call / redispatch.
bool is_entry_point_of(const std::string& symbol, const std::string& family);

// The entry points of `op_display`'s family that `library` imports (each read once per process).
const std::vector<std::string>& fallback_imports(const std::string& library, const std::string& op_display);

// The NUL-ended names in an ELF shared library's loaded data (.rodata, .data and their kin; not
// its code nor its symbol tables): the last run of name characters (letters, digits, _ : .)
// before each string's end, 4 or more, so that a name the linker stored as the tail of a longer
// string is read too. Throws std::runtime_error for a file that is not a 64-bit ELF object.
std::vector<std::string> data_names(const std::string& library);

// Whether `text` ends with the dispatcher's name of an operator of family `family` (aten::relu,
// aten::relu_, aten::add.Tensor, aten::add_.Tensor): what a lookup by name finds it with.
bool is_operator_name_of(const std::string& text, const std::string& family);

// What `library` names in its data that reaches ATen's own implementation of `op_display`'s
// family at run time (each read once per process): an entry point's symbol (demangled; looked up
// with dlsym) or the operator's dispatcher name (found with Dispatcher::findSchema and
// redispatched below the observer). A name the kernel builds at run time is not seen.
const std::vector<std::string>& fallback_names(const std::string& library, const std::string& op_display);

// Where a Python kernel's source names a way to run an operator's ATen kernel below the worker's
// observer (an OpOverload's redispatch, redispatch_boxed or _op_dk: the dispatcher's kernel for a
// key, which runs no RecordFunction), read as words of its text less its comments, strings too
// (getattr(op, "redispatch")). A name built at run time is not seen. Throws std::runtime_error
// for a file that cannot be read.
struct SourceName {
  int line = 0, column = 0;  // 1-based
  std::string name;
  bool operator==(const SourceName& other) const {
    return line == other.line && column == other.column && name == other.name;
  }
};
std::vector<SourceName> python_redispatches(const std::string& source);

}  // namespace backendbench
