// What `backendbench run` makes of a kernel folder before any build: every problem it holds
// (model::find_kernels, with libtorch's schemas), each one located diagnostic on its own kernels'
// cases, and the folder the build then reads (a view without what the problems leave out).
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "model/model.h"

namespace backendbench::planner {

// The problems of the kernel folder `directory`; the paths they leave out are spelt as
// `directory` + "/" + <folder> [+ "/" + <file>], and each diagnostic's location is shown
// relative to `here` (the working directory) where it lies below it.
std::vector<model::KernelProblem> kernel_folder_problems(const std::string& directory, const std::string& here);

// Every folder and file the problems leave out.
std::set<std::string> left_out_paths(const std::vector<model::KernelProblem>& problems);

// `view`: the kernel folder `kernels` again, as links to its files, without the folders and files
// in `left_out`, so that the other kernels build and run while those are reported. A folder left
// without a kernel file gets no folder in the view (an empty one is not a kernel folder).
void write_kernel_view(const std::string& kernels, const std::set<std::string>& left_out, const std::string& view);

// run.json's kernel_problems: per problem its message (the diagnostic as printed), location,
// problem, expected form, the kernel it fails (operator, implementation; null: none) and what it
// leaves out.
nlohmann::json kernel_problems_json(const std::vector<model::KernelProblem>& problems);

}  // namespace backendbench::planner
