// A run's build folder values; see tree_selection.h.
#include "planner/tree_selection.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "language/naming.h"

namespace backendbench::planner {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, separator)) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string joined(const std::vector<std::string>& items, char separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : std::string(1, separator)) + item;
  return text;
}

// The folder's list `name` if it has every item `covered` accepts of `wanted`, else the folder's
// items with the missing ones appended. `empty_means_all`: an empty list (operators) selects
// everything, so an empty list on either side is the whole.
std::string joined_list(const std::optional<std::string>& cached, const std::vector<std::string>& wanted, char separator,
                        bool empty_means_all,
                        const std::function<bool(const std::string& had, const std::string& want)>& covered) {
  if (!cached) return joined(wanted, separator);
  std::vector<std::string> have = split(*cached, separator);
  if (empty_means_all && (have.empty() || wanted.empty())) return "";
  for (const std::string& want : wanted) {
    const bool found = std::any_of(have.begin(), have.end(), [&](const std::string& had) { return covered(had, want); });
    if (!found) have.push_back(want);
  }
  return joined(have, separator);
}

bool same(const std::string& had, const std::string& want) { return had == want; }

}  // namespace

bool filter_covers(const std::string& broad, const std::string& narrow) {
  if (broad == narrow) return true;
  const auto wide = naming::OperatorName::from_user(broad), exact = naming::OperatorName::from_user(narrow);
  if (!wide || !exact) return false;
  const std::string bare = broad.rfind("aten.", 0) == 0 ? broad.substr(5) : broad;
  if (bare.find('.') == std::string::npos) return wide->base == exact->base;  // a base name: all its overloads
  const std::string narrow_bare = narrow.rfind("aten.", 0) == 0 ? narrow.substr(5) : narrow;
  return narrow_bare.find('.') != std::string::npos && *wide == *exact;
}

std::map<std::string, std::string> tree_values(const TreeSelection& selection, const CachedValue& cached) {
  std::vector<std::string> builtin, file_suites;
  for (const SuiteChoice& suite : selection.suites) {
    if (suite.traces.empty()) {
      builtin.push_back(suite.name);
    } else {
      file_suites.push_back(suite.name + "=" + suite.traces);
    }
  }
  std::map<std::string, std::string> values = {
      {"BACKENDBENCH_SUITES", joined_list(cached("BACKENDBENCH_SUITES"), builtin, ';', false, same)},
      // A trace file suite is its name and its file; a name given another file replaces it.
      {"BACKENDBENCH_SUITE_FILES",
       joined_list(cached("BACKENDBENCH_SUITE_FILES"), file_suites, ';', false,
                   [&](const std::string& had, const std::string& want) { return had == want; })},
      {"BACKENDBENCH_KERNELS_DIR", selection.kernels_directory},
      {"BACKENDBENCH_OPS", joined_list(cached("BACKENDBENCH_OPS"), selection.ops, ',', true, filter_covers)},
      {"BACKENDBENCH_TOPN", std::to_string(selection.topn)},
      {"BACKENDBENCH_BOTTOMN", "0"},
      {"BACKENDBENCH_OP_LIBRARIES", joined_list(cached("BACKENDBENCH_OP_LIBRARIES"), selection.op_libraries, ';', false, same)},
      {"BACKENDBENCH_KERNELS_VIEW_OF", selection.kernels_view_of},
      // The run builds the kernel libraries itself, beside the executables (build_steps.h).
      {"BACKENDBENCH_KERNELS_APART", "ON"}};
  // A suite file named again with another file: only the new one. One whose file is gone since
  // (a trace file written for one run) is dropped, as configuring would fail on it.
  std::vector<std::string> files = split(values["BACKENDBENCH_SUITE_FILES"], ';'), kept;
  for (const std::string& entry : files) {
    const std::string name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(file_suites.begin(), file_suites.end(), [&](const std::string& wanted) {
      return wanted != entry && wanted.substr(0, wanted.find('=')) == name;
    });
    const bool requested = std::find(file_suites.begin(), file_suites.end(), entry) != file_suites.end();
    std::error_code error;
    if (!replaced && (requested || std::filesystem::exists(entry.substr(entry.find('=') + 1), error))) kept.push_back(entry);
  }
  values["BACKENDBENCH_SUITE_FILES"] = joined(kept, ';');
  if (!selection.torchbench_traces.empty()) values["BACKENDBENCH_TORCHBENCH_TRACES"] = selection.torchbench_traces;
  if (selection.candidate_slots > 0) {
    const int had = std::atoi(cached("BACKENDBENCH_CANDIDATE_SLOTS").value_or("0").c_str());
    values["BACKENDBENCH_CANDIDATE_SLOTS"] = std::to_string(std::max({8, selection.candidate_slots, had}));
  }
  return values;
}

}  // namespace backendbench::planner
