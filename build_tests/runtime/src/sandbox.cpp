// The bubblewrap sandbox of kernel workers; see sandbox.h.
#include "backendbench/sandbox.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace backendbench {
namespace {

// Names passed through as they are. Everything else stays outside, whatever it is called.
const std::set<std::string>& allowlist() {
  static const std::set<std::string> names = {
      "PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "TZ", "TERM",
      "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
      "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
      "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
      "NVIDIA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF", "TORCH_SHOW_CPP_STACKTRACES",
  };
  return names;
}

// Shapes of secrets, refused even if a name above ever matched one.
bool looks_secret(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* part : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"}) {
    if (upper.find(part) != std::string::npos) return true;
  }
  for (const char* prefix : {"AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "CLOUDSDK_", "HF_", "HUGGING", "OPENAI_",
                             "ANTHROPIC_", "GITHUB_", "GH_", "SSH_", "GPG_", "NPM_", "PIP_", "SLURM_", "KUBE"}) {
    if (upper.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool is_under(const std::string& path, const std::string& folder) {
  return path == folder || (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
                            (folder.back() == '/' || path[folder.size()] == '/'));
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

bool environment_variable_allowed(const std::string& name) { return allowlist().count(name) > 0 && !looks_secret(name); }

std::map<std::string, std::string> sandbox_environment(const std::string& scratch,
                                                       const std::function<const char*(const char*)>& lookup) {
  std::map<std::string, std::string> environment;
  for (const std::string& name : allowlist()) {
    if (!environment_variable_allowed(name)) continue;
    const char* value = lookup ? lookup(name.c_str()) : std::getenv(name.c_str());
    if (value != nullptr) environment[name] = value;
  }
  if (environment.count("PATH") == 0) environment["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  environment["HOME"] = scratch + "/home";
  environment["TMPDIR"] = scratch + "/tmp";
  environment["USER"] = "nobody";
  environment["XDG_CACHE_HOME"] = scratch + "/cache";
  environment["TRITON_CACHE_DIR"] = scratch + "/cache/triton";
  environment["TORCHINDUCTOR_CACHE_DIR"] = scratch + "/cache/inductor";
  environment["PYTHONDONTWRITEBYTECODE"] = "1";
  return environment;
}

std::vector<std::string> loaded_library_folders() {
  std::set<std::string> folders;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (path.find(" (deleted)") != std::string::npos) continue;
    if (path.find(".so") == std::string::npos && access(path.c_str(), X_OK) != 0) continue;
    folders.insert(folder_of(path));
    // A library of a Python installation: the whole installation (its standard library and
    // site-packages hold what a Python kernel or libtorch's own Python parts load).
    const size_t python = path.find("/lib/python3");
    if (python != std::string::npos) folders.insert(path.substr(0, python));
  }
  return {folders.begin(), folders.end()};
}

std::optional<std::string> bubblewrap_executable() {
  if (const char* path = std::getenv("PATH")) {
    std::stringstream folders(path);
    for (std::string folder; std::getline(folders, folder, ':');) {
      if (!folder.empty() && access((folder + "/bwrap").c_str(), X_OK) == 0) return folder + "/bwrap";
    }
  }
  if (access("/usr/bin/bwrap", X_OK) == 0) return std::string("/usr/bin/bwrap");
  return std::nullopt;
}

std::vector<std::string> sandboxed_command(const std::string& bubblewrap, const SandboxPolicy& policy,
                                           const std::vector<std::string>& command) {
  std::vector<std::string> argv = {bubblewrap,
                                   "--unshare-all",  // user, IPC, PID, network, UTS, cgroup
                                   "--unshare-user", "--uid", "65534", "--gid", "65534",
                                   "--cap-drop", "ALL", "--die-with-parent", "--new-session",
                                   "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"};
  std::vector<std::string> hidden = {"/tmp", "/var/tmp", "/root", "/home", "/run", "/mnt", "/media", "/srv"};
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/' && std::string(home) != "/") hidden.push_back(home);
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && tmp[0] == '/' && std::string(tmp) != "/") hidden.push_back(tmp);
  for (const std::string& folder : policy.hidden) {
    if (folder.size() > 1 && folder[0] == '/') hidden.push_back(folder);
  }
  std::sort(hidden.begin(), hidden.end());  // parents before their children
  for (const std::string& folder : hidden) {
    if (!exists(folder)) continue;
    bool under_hidden = false;
    for (const std::string& other : hidden) under_hidden = under_hidden || (other != folder && is_under(folder, other));
    // Sized, so that writing there cannot fill the machine's memory: /tmp holds the scratch,
    // the others only the mount points of what is bound back.
    const int64_t size = folder == "/tmp" ? policy.scratch_bytes : int64_t{1} << 20;
    if (!under_hidden) argv.insert(argv.end(), {"--size", std::to_string(size), "--tmpfs", folder});
  }
  // What must stay readable under a hidden folder, bound back read-only (outside every hidden
  // folder it is readable already).
  std::set<std::string> bound;
  std::vector<std::string> read_only = policy.read_only;
  // A path that is a link (a kernel view's file, say) is readable only with where it leads.
  for (const std::string& path : policy.read_only) {
    std::error_code error;
    const std::filesystem::path target = std::filesystem::canonical(path, error);
    if (!error && target.string() != path) read_only.push_back(target.string());
  }
  std::sort(read_only.begin(), read_only.end());
  for (const std::string& path : read_only) {
    if (path.empty() || path[0] != '/' || !exists(path)) continue;
    const bool hidden_here = std::any_of(hidden.begin(), hidden.end(), [&](const std::string& folder) { return is_under(path, folder); });
    const bool covered = std::any_of(bound.begin(), bound.end(), [&](const std::string& folder) { return is_under(path, folder); });
    if (!hidden_here || covered) continue;
    argv.insert(argv.end(), {"--ro-bind", path, path});
    bound.insert(path);
  }
  for (const std::string& path : policy.writable) {
    if (!path.empty() && path[0] == '/' && exists(path)) argv.insert(argv.end(), {"--bind", path, path});
  }
  for (const char* folder : {"", "/home", "/tmp", "/cache"}) {
    argv.insert(argv.end(), {"--dir", std::string(SandboxPolicy::kScratch) + folder});
  }
  if (policy.gpu) {
    for (const std::string& name : [] {
           std::vector<std::string> names;
           if (DIR* dev = opendir("/dev")) {
             while (dirent* entry = readdir(dev)) {
               if (std::string(entry->d_name).rfind("nvidia", 0) == 0) names.push_back(entry->d_name);
             }
             closedir(dev);
           }
           return names;
         }()) {
      argv.insert(argv.end(), {"--dev-bind", "/dev/" + name, "/dev/" + name});
    }
  }
  argv.push_back("--clearenv");
  for (const auto& [name, value] : policy.environment) argv.insert(argv.end(), {"--setenv", name, value});
  argv.push_back("--chdir");
  argv.push_back(policy.working_directory.empty() ? std::string(SandboxPolicy::kScratch) : policy.working_directory);
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> build_command_outputs(const std::vector<std::string>& words, const std::string& working_directory) {
  std::set<std::string> folders;
  const auto add = [&](const std::string& word) {
    if (!word.empty()) folders.insert(folder_of(word[0] == '/' ? word : working_directory + "/" + word));
  };
  // The linker's dependency file, which CMake 3.27 and later asks a GNU ld for.
  const std::string dependency_file = "-Wl,--dependency-file=";
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind(dependency_file, 0) == 0) add(words[i].substr(dependency_file.size()));
    if ((words[i] == "-o" || words[i] == "-MF") && i + 1 < words.size()) add(words[i + 1]);
  }
  return {folders.begin(), folders.end()};
}

std::vector<std::string> build_command_inputs(const std::vector<std::string>& words) {
  std::set<std::string> inputs;
  const auto add = [&](const std::filesystem::path& path) {
    std::error_code error;
    const std::filesystem::path real = std::filesystem::canonical(path, error);
    if (!error) inputs.insert(real.string());
  };
  for (const std::string& word : words) {
    // A path as a word of its own or after an option (-I/x, -L/x, --option=/x, -Wl,-rpath,/a:/b).
    const size_t slash = word.find('/');
    if (slash == std::string::npos || (slash > 0 && word[0] != '-')) continue;
    std::string named = word.substr(slash);
    if (const size_t equals = word.find('='); equals != std::string::npos && equals < slash) named = word.substr(equals + 1);
    std::stringstream paths(named);
    for (std::string path; std::getline(paths, path, ':');) {
      std::error_code error;
      if (path.empty() || path[0] != '/' || !std::filesystem::exists(path, error)) continue;
      add(path);
      if (std::filesystem::is_regular_file(path, error)) {
        add(folder_of(std::filesystem::canonical(path, error).string()));  // cmake_pch.hxx.gch beside it
      }
    }
  }
  return {inputs.begin(), inputs.end()};
}

}  // namespace backendbench
