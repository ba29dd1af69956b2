// Write-if-changed output of generated files.
#include "emit/writer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "language/diagnostic.h"

namespace backendbench::emit {
namespace fs = std::filesystem;

OutputWriter::OutputWriter(std::string root) : root_(std::move(root)) {}

bool OutputWriter::write(const std::string& relative, const std::string& content) {
  const fs::path path = fs::path(root_) / relative;
  outputs_.push_back(relative);
  {
    std::ifstream existing(path, std::ios::binary);
    if (existing) {
      std::ostringstream buffer;
      buffer << existing.rdbuf();
      if (buffer.str() == content) return false;
    }
  }
  fs::create_directories(path.parent_path());
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw DiagnosticError({path.string(), 0, 0, "cannot write the generated file", "a writable build folder"});
  }
  fs::rename(temporary, path);
  ++changed_;
  return true;
}

std::vector<std::string> OutputWriter::remove_stale(const std::vector<std::string>& keep) {
  std::vector<std::string> removed;
  if (!fs::is_directory(root_)) return removed;
  std::vector<std::string> known = outputs_;
  known.insert(known.end(), keep.begin(), keep.end());
  std::sort(known.begin(), known.end());
  for (const auto& entry : fs::recursive_directory_iterator(root_)) {
    if (!entry.is_regular_file()) continue;
    const std::string relative = fs::relative(entry.path(), root_).generic_string();
    if (!std::binary_search(known.begin(), known.end(), relative)) removed.push_back(entry.path().string());
  }
  for (const std::string& path : removed) fs::remove(path);
  return removed;
}

}  // namespace backendbench::emit
