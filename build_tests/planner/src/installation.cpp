// installation() (installation.h): the one source of the planner compiled with its build folder's
// paths, so the planner's other objects are the same in every build folder (ccache shares them).
#include "planner/installation.h"

namespace backendbench::planner {

Installation installation() {
  return {BACKENDBENCH_SOURCE_DIR, BACKENDBENCH_BINARY_DIR, std::string(BACKENDBENCH_SOURCE_DIR) + "/templates",
          BACKENDBENCH_PLOTLY_JS};
}

}  // namespace backendbench::planner
