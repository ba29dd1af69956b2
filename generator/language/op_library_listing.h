// The listing of a Python op library (flag_gems): what its module says it implements, written at
// build time by `python -m backendbench.op_libraries --list NAME` and read by the generator (one
// CTest entry per operator) and by the Python bridge (one backend per operator).
//
//   # op library flag_gems (flag_gems 5.0.2, 433 registrations)
//   # device: cuda
//   # unavailable: RuntimeError: No device were detected on your machine
//   abs.default
//   add.Tensor
#pragma once

#include <string>
#include <vector>

#include "language/naming.h"

namespace backendbench {

struct OpLibraryListing {
  std::string name;
  bool is_cuda = false;                          // `# device: cuda`
  std::string unavailable;                       // `# unavailable: why`; "" when it runs here
  std::vector<naming::OperatorName> operators;   // in listing order
};

// Throws DiagnosticError (file:line:col) for a file that cannot be read or a line that is not an
// overload.
OpLibraryListing read_op_library_listing(const std::string& name, const std::string& path);

}  // namespace backendbench
