// The sandbox every kernel worker runs in: bubblewrap (Debian's `bubblewrap`), never namespace
// code of our own. What a sandboxed process gets:
//   - an environment built from an allowlist (no *_API_KEY, *_TOKEN, *SECRET*, cloud
//     credentials: nothing that is not on the list), HOME and TMPDIR in its scratch folder;
//   - no network (its own network namespace), its own PID, IPC and UTS namespaces, no
//     capabilities, user nobody (65534);
//   - the file system read-only; /tmp, /var/tmp, /root, /home, /run, /mnt, /media, /srv, $HOME
//     hidden (empty, tiny), except the folders it must read (the libraries this process loaded,
//     the Python installation they belong to, the kernel libraries and sources) bound back
//     read-only; one writable folder, its scratch, on a memory file system of a fixed size inside
//     the sandbox (nothing it writes reaches the host's disks, and it is gone when it ends);
//   - the GPU device files only when it runs CUDA work;
//   - it dies with the process that started it (--die-with-parent); limits on memory, open
//     files, file size and core dumps are set by the launcher (kernel_workers.h) before it starts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace backendbench {

struct SandboxPolicy {
  // The one writable folder, inside the sandbox (under its own /tmp, made by bubblewrap).
  static constexpr const char* kScratch = "/tmp/backendbench_scratch";
  int64_t scratch_bytes = int64_t{2} << 30;
  std::vector<std::string> read_only;      // folders or files to keep visible, read-only
  std::vector<std::string> writable;       // folders bound writable (a build's output folders)
  std::vector<std::string> hidden;         // more folders hidden like /tmp (read_only and writable bound back)
  bool gpu = false;                        // bind the GPU device files (/dev/nvidia*)
  std::map<std::string, std::string> environment;  // the whole environment inside
  std::string working_directory;           // where the command starts; "": its scratch
};

// Whether `name` may be passed into a sandbox: on the allowlist (PATH, locale, thread counts,
// CUDA's device selection, the library and Python paths) and not shaped like a secret.
bool environment_variable_allowed(const std::string& name);

// The allowlisted part of this process's environment (read through `getenv`-like `lookup` for
// each allowlisted name; std::getenv by default), with HOME, TMPDIR and the caches pointed into
// `scratch`.
std::map<std::string, std::string> sandbox_environment(const std::string& scratch,
                                                       const std::function<const char*(const char*)>& lookup = nullptr);

// Folders a process needs to see to run what this process runs: the folders of every shared
// library this process has loaded (/proc/self/maps), and for a library inside a Python
// installation (…/lib/python3.X/…), that installation's prefix.
std::vector<std::string> loaded_library_folders();

// The bubblewrap executable, or nullopt when there is none (PATH, then /usr/bin/bwrap).
std::optional<std::string> bubblewrap_executable();

// For a build command of untrusted code (a compiler's command line, as words): the folders it
// writes (those of every -o, -MF and -Wl,--dependency-file= path; relative ones against
// `working_directory`), and what
// it reads besides its own sources: every absolute path it names that exists, canonical (include
// folders, a forced include and the folder of its precompiled form, libraries). So that the
// project, the build folder and $HOME can be hidden and only these bound back. Links inside a
// named folder are not followed: a kernel folder's link to ~/.key would bind the key; a kernel
// view's links lead into a folder its launcher is given (backendbench-build-sandbox --read-only).
std::vector<std::string> build_command_outputs(const std::vector<std::string>& words, const std::string& working_directory);
std::vector<std::string> build_command_inputs(const std::vector<std::string>& words);

// The argv that runs `command` inside the sandbox `policy` describes.
std::vector<std::string> sandboxed_command(const std::string& bubblewrap, const SandboxPolicy& policy,
                                           const std::vector<std::string>& command);

}  // namespace backendbench
