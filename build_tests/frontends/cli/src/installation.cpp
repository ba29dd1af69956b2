// installation() (commands.h): the one source of the command compiled with its build folder's
// paths, so the command's other objects are the same in every build folder (ccache shares them).
#include "cli/commands.h"

namespace backendbench::cli {

Installation installation() {
  return {BACKENDBENCH_SOURCE_DIR, BACKENDBENCH_BINARY_DIR, std::string(BACKENDBENCH_SOURCE_DIR) + "/templates",
          BACKENDBENCH_PLOTLY_JS};
}

}  // namespace backendbench::cli
