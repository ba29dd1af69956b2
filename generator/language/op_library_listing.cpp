// Reads an op library's listing; see op_library_listing.h.
#include "language/op_library_listing.h"

#include <fstream>
#include <optional>

#include "language/diagnostic.h"

namespace backendbench {

OpLibraryListing read_op_library_listing(const std::string& name, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw DiagnosticError({path, 0, 0, "cannot read the op library listing",
                           "the file `python -m backendbench.op_libraries --list " + name + "` writes"});
  }
  OpLibraryListing listing{name, false, "", {}};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      const size_t key_start = line.find_first_not_of("# ");
      const size_t colon = line.find(": ");
      if (key_start == std::string::npos || colon == std::string::npos || colon < key_start) continue;  // a comment
      const std::string key = line.substr(key_start, colon - key_start);
      const std::string value = line.substr(colon + 2);
      if (key == "device") listing.is_cuda = value == "cuda";
      if (key == "unavailable") listing.unavailable = value;
      continue;
    }
    std::optional<naming::OperatorName> op = naming::OperatorName::from_user(line);
    if (!op || line.find_first_of(" \t\r") != std::string::npos) {
      throw DiagnosticError({path, number, 1, "'" + line + "' is not an operator overload",
                             "one overload per line, such as add.Tensor"});
    }
    listing.operators.push_back(*op);
  }
  return listing;
}

}  // namespace backendbench
