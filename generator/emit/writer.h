// Writes generated files: only when the content changed (so builds stay incremental),
// atomically (a temporary file renamed into place, so nothing is half-written), and keeps
// the list of its outputs so stale files from an earlier run can be removed.
#pragma once

#include <string>
#include <vector>

namespace backendbench::emit {

class OutputWriter {
 public:
  explicit OutputWriter(std::string root);

  // `relative` is a path under the root. Returns true when the file was (re)written.
  bool write(const std::string& relative, const std::string& content);
  // Deletes files under the root that this writer did not write (except `keep`).
  std::vector<std::string> remove_stale(const std::vector<std::string>& keep = {});

  const std::vector<std::string>& outputs() const { return outputs_; }
  int changed() const { return changed_; }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
  std::vector<std::string> outputs_;  // relative paths, in write order
  int changed_ = 0;
};

}  // namespace backendbench::emit
