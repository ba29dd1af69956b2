// A new kernel file (`backendbench new <operator>`, and the stand-in the loop keeps for an operator
// no candidate passed) in the kernel contract's layout
// (<folder>/<folder>_implementation_<N>.cpp|.cu, N the next free number), with the exact C++
// signature that the installed libtorch's schema gives, and a body that fails clearly until written.
#pragma once

#include <string>

#include "model/schema.h"

namespace backendbench::agents {

struct ScaffoldedKernel {
  std::string path;         // absolute
  std::string folder;       // as on disk: relu, add__Tensor
  std::string op;           // display name: relu.default
  std::string backend;      // impl<N>
  std::string declaration;  // the kernel's C++ declaration
  std::string text;         // the file
};

// Works out the file; writes nothing. Throws DiagnosticError for an unknown operator or one whose schema
// the harness cannot bind. `user_op` as typed: a bare name (relu) makes a bare folder.
ScaffoldedKernel scaffold_kernel(const std::string& user_op, const std::string& kernels_directory, bool cuda,
                                 const model::SchemaSource& schemas, const std::string& templates_directory,
                                 const std::string& torch_version);

// Writes it (the folder too), refusing to replace a file. Throws DiagnosticError.
void write_scaffold(const ScaffoldedKernel& kernel);

}  // namespace backendbench::agents
