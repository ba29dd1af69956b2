// POSIX folders and files; see files.h for why not std::filesystem.
#include "backendbench/files.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace backendbench::files {
namespace {

// nftw's callbacks take no context: the one walk in flight on this thread keeps its state here.
thread_local std::vector<std::string>* found = nullptr;
thread_local const std::string* wanted_suffix = nullptr;

int collect(const char* path, const struct stat*, int type, struct FTW*) {
  if (type != FTW_F) return 0;
  const size_t length = std::strlen(path);
  if (length >= wanted_suffix->size() &&
      std::memcmp(path + length - wanted_suffix->size(), wanted_suffix->data(), wanted_suffix->size()) == 0) {
    found->emplace_back(path);
  }
  return 0;
}

int remove_one(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

}  // namespace

bool is_folder(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  if (DIR* handle = ::opendir(folder.c_str())) {
    while (const dirent* entry = ::readdir(handle)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(handle);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void write_whole(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error(temporary + ": error: cannot write; expected a writable folder");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string cause = std::strerror(errno);
    std::remove(temporary.c_str());
    throw std::runtime_error(path + ": error: cannot move the written file into place (" + cause + ")");
  }
}

void make_link(const std::string& target, const std::string& link) {
  if (::symlink(target.c_str(), link.c_str()) != 0) {
    throw std::runtime_error("cannot link " + link + " to " + target + ": " + std::strerror(errno));
  }
}

void make_directories(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      throw std::runtime_error("cannot create the folder " + prefix + ": " + std::strerror(errno));
    }
    if (slash == std::string::npos) break;
  }
  if (!is_folder(path)) throw std::runtime_error("cannot create the folder " + path + ": a file is in the way");
}

void remove_tree(const std::string& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0) return;
  // Depth first (FTW_DEPTH) so that each folder is empty when its turn comes; links are removed,
  // never followed (FTW_PHYS).
  if (::nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    throw std::runtime_error("cannot remove " + path + ": " + std::strerror(errno));
  }
}

std::vector<std::string> files_ending_with(const std::string& folder, const std::string& suffix) {
  std::vector<std::string> paths;
  if (!is_folder(folder)) return paths;
  found = &paths;
  wanted_suffix = &suffix;
  ::nftw(folder.c_str(), collect, 16, FTW_PHYS);
  found = nullptr;
  wanted_suffix = nullptr;
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string temporary_directory() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

}  // namespace backendbench::files
