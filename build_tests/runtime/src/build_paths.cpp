// The one runtime source compiled with this build folder's paths (build_paths.h).
#include "backendbench/build_paths.h"

namespace backendbench::build_paths {

const char* worker_executable() { return BACKENDBENCH_WORKER_EXECUTABLE; }

const char* python_bridge() {
#ifdef BACKENDBENCH_PYTHON_BRIDGE
  return BACKENDBENCH_PYTHON_BRIDGE;
#else
  return nullptr;
#endif
}

const char* python_package_dir() {
#ifdef BACKENDBENCH_PYTHON_PACKAGE_DIR
  return BACKENDBENCH_PYTHON_PACKAGE_DIR;
#else
  return nullptr;
#endif
}

}  // namespace backendbench::build_paths
