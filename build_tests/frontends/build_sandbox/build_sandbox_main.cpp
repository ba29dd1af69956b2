// backendbench-build-sandbox: runs one build command of untrusted code in the sandbox kernel
// workers run in (sandbox.h). It is CMake's compiler launcher for every kernel library
// (backendbench_add_kernels sets <LANG>_COMPILER_LAUNCHER), so a kernel's compile sees the
// toolchain and what its command line names, never $HOME, /tmp, the rest of the project or the
// build folder (logs, earlier results), nor the user's environment: an `#include` of a secret
// finds nothing, and the compiler's errors can quote nothing secret. It writes only the folders
// of its -o and -MF paths. BACKENDBENCH_SANDBOX=none (backendbench run --no-sandbox) runs the
// command as it is. --read-only names a folder it may read besides what its command names: the
// folder a kernel view's links lead into (links are never followed to decide what it may read).
//
//   backendbench-build-sandbox [--hide <folder>]... [--read-only <folder>]... -- <command> [<argument>]...
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "backendbench/sandbox.h"

namespace {

constexpr const char* kUsage =
    "expected `backendbench-build-sandbox [--hide <folder>]... [--read-only <folder>]... -- <command> [<argument>]...`";

int exec(const std::vector<std::string>& argv) {
  std::vector<char*> pointers;
  for (const std::string& word : argv) pointers.push_back(const_cast<char*>(word.c_str()));
  pointers.push_back(nullptr);
  execv(pointers[0], pointers.data());
  std::cerr << "backendbench-build-sandbox: error: cannot run " << argv[0] << ": " << std::strerror(errno)
            << "; expected an executable given by its path\n";
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> hidden, read_only, command;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--hide" && i + 1 < argc && argv[i + 1][0] == '/') {
      hidden.push_back(argv[++i]);
    } else if (word == "--read-only" && i + 1 < argc && argv[i + 1][0] == '/') {
      read_only.push_back(argv[++i]);
    } else if (word == "--") {
      command.assign(argv + i + 1, argv + argc);
      break;
    } else {
      std::cerr << "backendbench-build-sandbox: error: unexpected argument '" << word << "'; " << kUsage << "\n";
      return 2;
    }
  }
  if (command.empty() || command[0].empty() || command[0][0] != '/') {
    std::cerr << "backendbench-build-sandbox: error: no command given by its path; " << kUsage << "\n";
    return 2;
  }
  const char* mode = std::getenv("BACKENDBENCH_SANDBOX");
  const std::string sandbox = mode != nullptr ? mode : "bwrap";
  if (sandbox == "none") return exec(command);
  if (sandbox != "bwrap" && !sandbox.empty()) {
    std::cerr << "backendbench-build-sandbox: error: BACKENDBENCH_SANDBOX is '" << sandbox << "'; expected 'bwrap' or 'none'\n";
    return 2;
  }
  const std::optional<std::string> bubblewrap = backendbench::bubblewrap_executable();
  if (!bubblewrap) {
    std::cerr << "backendbench-build-sandbox: error: kernels are built sandboxed by bubblewrap, which is not installed; "
                 "expected bwrap on PATH (Debian: apt install bubblewrap), or BACKENDBENCH_SANDBOX=none (backendbench run "
                 "--no-sandbox) to build and run them unsandboxed\n";
    return 1;
  }
  std::vector<char> buffer(4096);
  if (getcwd(buffer.data(), buffer.size()) == nullptr) {
    std::cerr << "backendbench-build-sandbox: error: cannot read the working folder: " << std::strerror(errno) << "\n";
    return 1;
  }
  backendbench::SandboxPolicy policy;
  policy.working_directory = buffer.data();
  policy.hidden = hidden;
  policy.read_only = backendbench::build_command_inputs(command);
  policy.read_only.insert(policy.read_only.end(), read_only.begin(), read_only.end());
  policy.writable = backendbench::build_command_outputs(command, policy.working_directory);
  policy.environment = backendbench::sandbox_environment(backendbench::SandboxPolicy::kScratch);
  return exec(backendbench::sandboxed_command(*bubblewrap, policy, command));
}
