// The GoogleTest front-end: one test per (operator, backend, case), registered at start-up from
// the case tables and the backend registry (kernels loaded from the kernel manifest), so that
// adding a kernel adds tests without recompiling anything. Names are the generated suites'
// `<suite>/<operator folder>.<backend>/<case>`, so gtest filters and CTest entries select them.
#pragma once

#include "backendbench/settings.h"

namespace backendbench {

void register_correctness_tests(const Settings& settings);

// Starts the running case's timeout clock again (test_main.cpp's watchdog): after one-time work
// that is not the case's, such as importing a Python kernel's module on its first case.
void restart_case_clock();

// The kernel manifest an executable loads at start-up (kernel_manifest.cpp, compiled into each
// executable with its own path).
extern const char* const kKernelManifest;

}  // namespace backendbench
