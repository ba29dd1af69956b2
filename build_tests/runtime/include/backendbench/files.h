// Folders and files for the runtime and its front-ends, through POSIX calls rather than
// std::filesystem. Why: PyTorch's libtorch_cpu exports its own statically linked copies of
// libstdc++'s std::filesystem (pytorch/pytorch#133437); a program built by a newer g++ that links
// it binds to those copies, and std::filesystem::remove_all segfaulted in every such process on
// the GPU machine (torch 2.11, g++ 13). The generator links no libtorch and keeps std::filesystem.
#pragma once

#include <string>
#include <vector>

namespace backendbench::files {

// Creates `path` and its missing parents; throws std::runtime_error naming the path and the cause.
void make_directories(const std::string& path);

// Removes `path` and everything under it; nothing when it does not exist.
void remove_tree(const std::string& path);

// Every regular file under `folder` (at any depth) whose name ends with `suffix`, sorted; empty
// when `folder` is not a folder.
std::vector<std::string> files_ending_with(const std::string& folder, const std::string& suffix);

// The names in `folder` (not . or ..), sorted; empty when it is not a folder.
std::vector<std::string> names_in(const std::string& folder);
bool is_folder(const std::string& path);

// Writes `text` to `path` whole: under `path`.partial first, then renamed into place, so no reader
// sees half a file. Throws std::runtime_error naming the file and the cause.
void write_whole(const std::string& path, const std::string& text);

// Makes `link` a symbolic link to `target`; throws std::runtime_error naming both and the cause.
void make_link(const std::string& target, const std::string& link);

// $TMPDIR when set, else /tmp.
std::string temporary_directory();

}  // namespace backendbench::files
