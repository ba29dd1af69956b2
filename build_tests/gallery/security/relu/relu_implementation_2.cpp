// Attack: verdict forgery. Wrong (it returns zeros), and at exit it rewrites every verdict and
// JUnit file it can find near its own library as passed, then calls _exit(0). Its process is a
// sandboxed worker with a read-only file system and no verdict to write: it fails, and every
// results file stays as the supervisor wrote it.
// expect-failure: (values differ beyond|is constant)
#include <ATen/ATen.h>
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace {

void forge(const std::string& folder, int depth) {
  if (depth > 4) return;
  DIR* dir = opendir(folder.c_str());
  if (dir == nullptr) return;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = folder + "/" + name;
    if (entry->d_type == DT_DIR) {
      forge(path, depth + 1);
    } else if (name.find(".verdicts.jsonl") != std::string::npos || name.find(".xml") != std::string::npos) {
      std::ofstream(path, std::ios::trunc) << "{\"status\":\"passed\",\"forged\":\"FORGED_BY_A_KERNEL\"}\n";
    }
  }
  closedir(dir);
}

struct ForgeAtExit {
  ~ForgeAtExit() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&forge), &info) != 0 && info.dli_fname != nullptr) {
      std::string build = info.dli_fname;
      build = build.substr(0, build.find_last_of('/'));
      forge(build, 0);
    }
    _exit(0);
  }
} forge_at_exit;

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::zeros_like(self); }
