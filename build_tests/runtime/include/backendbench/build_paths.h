// Where this build folder put the files the runtime starts or loads while it runs: the kernel
// worker and the Python bridge. Fixed when the build is configured, and kept in build_paths.cpp
// alone, so every other runtime source compiles the same in every build folder (ccache shares
// their objects between the build folders `backendbench run` makes).
#pragma once

namespace backendbench::build_paths {

// The kernel worker executable (backendbench-worker).
const char* worker_executable();
// The Python bridge's shared library; nullptr where this build has none.
const char* python_bridge();
// The Python package's folder (python/), which a sandboxed worker must see; nullptr likewise.
const char* python_package_dir();

}  // namespace backendbench::build_paths
