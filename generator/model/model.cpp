// Building suites from traces, and finding kernels on disk.
#include "model/model.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "language/diagnostic.h"
#include "language/op_library_listing.h"
#include "language/printer.h"

namespace backendbench::model {
namespace fs = std::filesystem;
namespace {

void visit_tensors(const parse::Value& value, const std::function<void(const parse::TensorValue&)>& visit) {
  if (const auto* tensor = value.as<parse::TensorValue>()) visit(*tensor);
  if (const auto* sequence = value.as<parse::SequenceValue>()) {
    for (const auto& item : sequence->items) visit_tensors(item, visit);
  }
}

void visit_tensors(const parse::Arguments& arguments, const std::function<void(const parse::TensorValue&)>& visit) {
  for (const auto& value : arguments.positional) visit_tensors(value, visit);
  for (const auto& [unused, value] : arguments.keywords) visit_tensors(value, visit);
}

}  // namespace

std::string KernelVariant::binding_symbol() const {
  return "backendbench_kernel_" + op.folder() + "_" + name() + (derived_from ? "_from_" + derived_from->folder() : "");
}

std::string KernelVariant::entries_symbol() const { return binding_symbol() + "_entries"; }

std::string tensor_summary(const parse::Arguments& arguments) {
  std::string summary;
  visit_tensors(arguments, [&](const parse::TensorValue& tensor) {
    if (!summary.empty()) summary += "_";
    summary += tensor.dtype + "_";
    if (tensor.shape.empty()) summary += "0d";
    for (size_t i = 0; i < tensor.shape.size(); ++i) summary += (i > 0 ? "x" : "") + std::to_string(tensor.shape[i]);
  });
  return summary;
}

int64_t input_elements(const parse::Arguments& arguments) {
  // Each tensor's count fits 64 bits (the parser checks it); their sum saturates.
  int64_t total = 0;
  visit_tensors(arguments, [&](const parse::TensorValue& tensor) {
    const int64_t elements = parse::storage_extent(tensor.shape, std::nullopt).value_or(INT64_MAX);
    if (__builtin_add_overflow(total, elements, &total)) total = INT64_MAX;
  });
  return total;
}

// Operators no case of which can be checked, with the reason. Random operators are recognised
// by libtorch's nondeterministic_seeded tag (Schema::random_by_design), not listed here.
std::optional<std::string> operator_exclusion(const OperatorName& op, const Schema& schema) {
  // Tagged for a dropout argument that the traced calls leave at 0.0: deterministic as traced.
  const bool random_only_with_dropout = op.display() == "_cudnn_rnn.default";
  if (schema.random_by_design && !random_only_with_dropout) {
    return std::string("random operator: its output is random by design, so no reference can agree with it");
  }
  static const std::map<std::string, std::string> kExcluded = {
      {"_cudnn_rnn_backward.default",
       "consumes the opaque reserve buffer of the _cudnn_rnn call it differentiates; a trace cannot supply a valid one"}};
  auto found = kExcluded.find(op.display());
  if (found == kExcluded.end()) return std::nullopt;
  return found->second;
}

Suite build_suite(const std::string& name, const std::vector<parse::TraceFile>& traces, const SchemaSource& schemas,
                  const SuiteOptions& options, const std::vector<KernelVariant>& kernels) {
  Suite suite;
  suite.name = name;
  std::map<std::string, Operator> operators;            // by trace name: sorted, deterministic
  std::map<std::string, std::map<std::string, size_t>> case_index;  // op → arguments → index
  std::map<std::string, std::string> excluded_operators;  // trace name → reason
  for (const parse::TraceFile& trace : traces) {
    suite.sources.push_back(trace.path);
    for (const parse::OperatorSection& section : trace.operators) {
      const std::string trace_name = resolve_trace_alias(section.name);
      std::optional<OperatorName> op = OperatorName::from_trace(trace_name);
      if (!op) {
        throw DiagnosticError({trace.path, section.line, 11, "malformed operator name '" + section.name + "'",
                               "namespace.name.overload, as in aten.add.Tensor"});
      }
      if (!options.op_filters.empty() &&
          std::none_of(options.op_filters.begin(), options.op_filters.end(),
                       [&](const std::string& filter) { return matches_filter(*op, filter); })) {
        continue;
      }
      auto found = operators.find(trace_name);
      if (found == operators.end() && !excluded_operators.count(trace_name)) {
        std::optional<Schema> schema = schemas.find(*op);
        if (!schema && !options.exclude_unknown_operators) {
          throw DiagnosticError({trace.path, section.line, 11, "unknown operator '" + section.name + "'",
                                 "an operator of the installed libtorch, as in aten.add.Tensor"});
        }
        if (!schema) {
          excluded_operators[trace_name] = "operator not in the installed libtorch";
        } else if (auto reason = operator_exclusion(*op, *schema)) {
          excluded_operators[trace_name] = *reason;
        } else if (KernelSignature signature = kernel_signature(*schema); !signature.unsupported.empty()) {
          excluded_operators[trace_name] = "schema not bindable: " + signature.unsupported;
        } else {
          Operator entry{*op, *schema, signature, {}, {}};
          for (const KernelVariant& kernel : kernels) {
            if (kernel.op == *op && !kernel.derived_from) entry.variants.push_back(kernel);
          }
          if (entry.variants.empty()) {  // no kernel of its own: one derived from its functional sibling
            for (const KernelVariant& kernel : kernels) {
              if (kernel.op == *op && kernel.derived_from) entry.variants.push_back(kernel);
            }
          }
          found = operators.emplace(trace_name, std::move(entry)).first;
        }
      }
      for (const parse::CaseLine& line : section.cases) {
        const std::string arguments = parse::print(line.arguments);
        const std::string location = trace.path + ":" + std::to_string(line.line);
        if (auto excluded = excluded_operators.find(trace_name); excluded != excluded_operators.end()) {
          suite.exclusions.push_back({trace_name, arguments, location, excluded->second});
          continue;
        }
        if (line.dataset && !line.dataset->included_in_benchmark) {
          std::string reasons;
          for (const std::string& reason : line.dataset->why_excluded) reasons += (reasons.empty() ? "" : "; ") + reason;
          suite.exclusions.push_back({trace_name, arguments, location,
                                      "excluded by the dataset (included_in_benchmark false)" +
                                          (reasons.empty() ? std::string() : ": " + reasons)});
          continue;
        }
        const bool synthetic = line.dataset ? line.dataset->is_synthetic : line.count == 0;
        std::vector<std::string> models;
        if (line.dataset) {
          models = line.dataset->in_models;
        } else {
          models.push_back(fs::path(trace.path).stem().string());
        }
        Operator& entry = found->second;
        auto& index = case_index[trace_name];
        if (auto existing = index.find(arguments); existing != index.end()) {
          Case& known = entry.cases[existing->second];
          known.count += line.count;
          known.synthetic = known.synthetic && synthetic;
          known.overhead_dominated = known.overhead_dominated || (line.dataset && line.dataset->is_overhead_dominated_op);
          for (const std::string& model : models) {
            if (std::find(known.models.begin(), known.models.end(), model) == known.models.end()) known.models.push_back(model);
          }
          continue;
        }
        Case entry_case;
        entry_case.name = case_name(tensor_summary(line.arguments), arguments);
        entry_case.arguments = arguments;
        entry_case.file = trace.path;
        entry_case.line = line.line;
        entry_case.count = line.count;
        entry_case.synthetic = synthetic;
        entry_case.models = std::move(models);
        entry_case.overhead_dominated = line.dataset && line.dataset->is_overhead_dominated_op;
        entry_case.seed = stable_hash(trace_name + " " + arguments);
        entry_case.input_elements = input_elements(line.arguments);
        index.emplace(arguments, entry.cases.size());
        entry.cases.push_back(std::move(entry_case));
      }
    }
  }
  for (auto& [trace_name, entry] : operators) {
    std::vector<Case> kept;
    for (Case& entry_case : entry.cases) {
      if (options.overhead_dominated_only && !entry_case.overhead_dominated) {
        ++suite.unselected;
      } else if (entry_case.synthetic && !options.include_synthetic) {
        suite.exclusions.push_back({trace_name, entry_case.arguments, entry_case.file + ":" + std::to_string(entry_case.line),
                                    "synthetic input (cnt: 0); include with BACKENDBENCH_INCLUDE_SYNTHETIC=ON (--include-synthetic)"});
      } else {
        kept.push_back(std::move(entry_case));
      }
    }
    if ((options.top_n > 0 || options.bottom_n > 0) && kept.size() > static_cast<size_t>(options.top_n + options.bottom_n)) {
      std::vector<size_t> order(kept.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return kept[a].input_elements > kept[b].input_elements; });
      std::set<size_t> chosen(order.begin(), order.begin() + options.top_n);
      chosen.insert(order.end() - options.bottom_n, order.end());
      suite.unselected += kept.size() - chosen.size();
      std::vector<Case> selected;  // in trace order
      for (size_t i : chosen) selected.push_back(std::move(kept[i]));
      kept = std::move(selected);
    }
    // Hash collisions of the 32-bit suffix are possible in principle: disambiguate, never merge.
    std::map<std::string, int> seen;
    for (Case& entry_case : kept) {
      if (int& uses = seen[entry_case.name]; uses++ > 0) entry_case.name += "_" + std::to_string(uses);
    }
    entry.cases = std::move(kept);
    if (!entry.cases.empty()) suite.operators.push_back(std::move(entry));
  }
  return suite;
}

namespace {

bool same_argument(const SchemaArgument& a, const SchemaArgument& b) { return a.name == b.name && a.type == b.type; }

// `sibling` takes the functional schema's arguments (self written, for in-place) plus, for
// out=, trailing written tensors; and returns one written tensor.
bool is_sibling(const Schema& functional, const Schema& sibling, bool in_place) {
  const auto& arguments = functional.arguments;
  const size_t extra = in_place ? 0 : 1;
  if (sibling.arguments.size() != arguments.size() + extra) return false;
  if (sibling.returns.size() != 1 || !sibling.returns[0].is_write) return false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!same_argument(arguments[i], sibling.arguments[i])) return false;
    if (sibling.arguments[i].is_write != (in_place && i == 0)) return false;
  }
  return in_place || (sibling.arguments.back().is_write && sibling.arguments.back().type == "Tensor");
}

}  // namespace

std::vector<KernelVariant> derive_variants(const std::vector<KernelVariant>& kernels, const SchemaSource& schemas) {
  std::vector<KernelVariant> derived;
  for (const KernelVariant& kernel : kernels) {
    // A Python kernel serves exactly its own overload, as in the original's directory backend.
    if (kernel.derived_from || !kernel.is_compiled()) continue;
    const std::optional<Schema> functional = schemas.find(kernel.op);
    if (!functional || functional->returns.size() != 1 || functional->returns[0].type != "Tensor" ||
        functional->returns[0].is_write || functional->arguments.empty() || functional->arguments[0].type != "Tensor") {
      continue;
    }
    if (std::any_of(functional->arguments.begin(), functional->arguments.end(),
                    [](const SchemaArgument& argument) { return argument.is_write; })) {
      continue;
    }
    const OperatorName in_place{kernel.op.space, kernel.op.base + "_", kernel.op.overload};
    const OperatorName out{kernel.op.space, kernel.op.base, "out"};
    const OperatorName overload_out{kernel.op.space, kernel.op.base, kernel.op.overload + "_out"};
    for (const auto& [sibling, is_in_place] : {std::pair{in_place, true}, {out, false}, {overload_out, false}}) {
      const std::optional<Schema> schema = schemas.find(sibling);
      if (!schema || !is_sibling(*functional, *schema, is_in_place)) continue;
      KernelVariant variant = kernel;
      variant.op = sibling;
      variant.derived_from = kernel.op;
      derived.push_back(variant);
    }
  }
  return derived;
}

std::string expected_failure_of(const fs::path& kernel_file) {
  const std::string marker = kernel_file.extension() == ".py" ? "# expect-failure:" : "// expect-failure:";
  std::ifstream in(kernel_file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, marker.size(), marker) != 0) continue;
    const size_t start = line.find_first_not_of(' ', marker.size());
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::map<std::string, std::string> expected_failures_by_suite(const fs::path& kernel_file) {
  const std::string marker = kernel_file.extension() == ".py" ? "# expect-failure in " : "// expect-failure in ";
  std::map<std::string, std::string> found;
  std::ifstream in(kernel_file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, marker.size(), marker) != 0) continue;
    const size_t colon = line.find(':', marker.size());
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(' ', colon + 1);
    found[line.substr(marker.size(), colon - marker.size())] = start == std::string::npos ? "" : line.substr(start);
  }
  return found;
}

std::string KernelVariant::expected_failure_for(const std::string& suite) const {
  if (!expected_failure.empty()) return expected_failure;
  const auto found = expected_failure_in_suite.find(suite);
  return found == expected_failure_in_suite.end() ? "" : found->second;
}

namespace {

std::string file_text(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A C++ or CUDA text without its comments (a name in a comment defines nothing). String
// literals are not told apart: read leniently, as what a file holds, never as a compiler would.
std::string without_comments(const std::string& text) {
  std::string code;
  code.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    if (text.compare(at, 2, "//") == 0) {
      at = text.find('\n', at);
      if (at == std::string::npos) break;
    } else if (text.compare(at, 2, "/*") == 0) {
      const size_t end = text.find("*/", at + 2);
      code += ' ';
      at = end == std::string::npos ? text.size() : end + 2;
    } else {
      code += text[at++];
    }
  }
  return code;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Each place `name` stands as a whole identifier in `text`.
std::vector<size_t> identifier_uses(const std::string& text, const std::string& name) {
  std::vector<size_t> uses;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const bool starts = at == 0 || !is_identifier_char(text[at - 1]);
    const bool ends = at + name.size() >= text.size() || !is_identifier_char(text[at + name.size()]);
    if (starts && ends) uses.push_back(at);
  }
  return uses;
}

// Whether a C++ or CUDA text defines function `name` (its parameter list followed by a body)
// rather than only declaring or calling it. Read leniently: it only describes a file's layout.
bool defines_function(const std::string& text, const std::string& name) {
  for (const size_t use : identifier_uses(text, name)) {
    size_t at = text.find_first_not_of(" \t\r\n", use + name.size());
    if (at == std::string::npos || text[at] != '(') continue;
    int depth = 0;
    for (; at < text.size(); ++at) {
      depth += text[at] == '(' ? 1 : text[at] == ')' ? -1 : 0;
      if (depth == 0) break;
    }
    if (at >= text.size()) continue;
    // Qualifiers between the parameters and the body.
    at = text.find_first_not_of(" \t\r\n", at + 1);
    while (at != std::string::npos && is_identifier_char(text[at])) {
      const size_t word_end = std::find_if_not(text.begin() + static_cast<std::ptrdiff_t>(at), text.end(), is_identifier_char) - text.begin();
      at = text.find_first_not_of(" \t\r\n", word_end);
    }
    if (at != std::string::npos && text[at] == '{') return true;
  }
  return false;
}

// Whether a Python text makes `name` a module-level name: a def, an assignment or an import.
bool python_defines(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || std::isspace(static_cast<unsigned char>(line[0]))) continue;  // module level only
    const auto uses = identifier_uses(line, name);
    if (uses.empty()) continue;
    if (line.rfind("def ", 0) == 0 || line.rfind("async def ", 0) == 0) {
      const size_t after = line.find_first_not_of(' ', line[0] == 'a' ? 10 : 4);
      if (after == uses.front()) return true;
      continue;
    }
    if (line.rfind("from ", 0) == 0 || line.rfind("import ", 0) == 0) return true;
    const size_t rest = line.find_first_not_of(" \t", uses.front() + name.size());
    if (uses.front() == 0 && rest != std::string::npos && (line[rest] == '=' || line[rest] == ':') &&
        line.compare(rest, 2, "==") != 0) {
      return true;
    }
  }
  return false;
}

// Up to `most` names of `names` nearest to `base` in edit distance (at most 2), nearest first.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "add___Tensor (add_.Tensor), ...": the folders a misnamed folder may have meant. The overloads
// of its base name where libtorch has some (add_ → add_.Tensor, add_.Scalar), else the
// operators whose base name is nearest to it.
std::string nearest_folders(const std::string& folder, const std::optional<OperatorName>& read_as, const SchemaSource& schemas) {
  const std::vector<OperatorName> names = schemas.names();
  const std::string base = read_as ? read_as->base : folder;
  std::vector<OperatorName> chosen;
  for (const OperatorName& name : names) {
    if (name.space == "aten" && name.base == base) chosen.push_back(name);
  }
  if (chosen.empty()) {
    std::vector<std::pair<size_t, OperatorName>> near;
    for (const OperatorName& name : names) {
      if (name.space != "aten") continue;
      const size_t distance = edit_distance(base, name.base);
      if (distance <= 2) near.push_back({distance, name});
    }
    std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [distance, name] : near) chosen.push_back(name);
  }
  std::sort(chosen.begin(), chosen.end(), [](const OperatorName& a, const OperatorName& b) {
    // the default overload and the common ones first, then by name
    const auto rank = [](const OperatorName& op) { return op.overload == "default" ? 0 : op.overload == "Tensor" ? 1 : 2; };
    return std::make_pair(rank(a), a.display()) < std::make_pair(rank(b), b.display());
  });
  std::string text;
  int shown = 0;
  for (const OperatorName& name : chosen) {
    if (shown == 5) {
      text += ", ...";
      break;
    }
    // A default overload by the bare name that means it (relu), as a user names the folder.
    const std::string folder_name = default_overload(name.base) == name.overload ? name.base : name.folder();
    text += (shown++ ? ", " : "") + folder_name + " (" + name.display() + ")";
  }
  return text;
}

// What a kernel file is, for a diagnostic that names two of one number.
std::string layout_of(const fs::path& file, const std::string& function) {
  const std::string extension = file.extension().string();
  if (extension == ".py") return "a Python kernel";
  const std::string text = without_comments(file_text(file));
  const bool defines = defines_function(text, function);
  if (extension == ".cu") return defines ? "a CUDA kernel (this project's layout: the .cu alone is the kernel)" : "a CUDA file that does not define " + function;
  if (defines) return "a C++ kernel";
  return identifier_uses(text, function).empty()
             ? "a C++ file that does not define " + function
             : "a declaration of " + function + " (BackendBench's layout: its definition is in the .cu of the same name)";
}

}  // namespace

FoundKernels find_kernels(const std::string& directory, const SchemaSource& schemas, bool check_contents) {
  FoundKernels found;
  if (!fs::is_directory(directory)) {
    throw DiagnosticError({directory, 0, 0, "kernel directory not found", "a folder with one sub-folder per operator"});
  }
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.is_directory() && entry.path().filename().string()[0] != '.') folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  const auto problem = [&found](const std::string& where, const std::string& what, const std::string& expected) -> KernelProblem& {
    found.problems.push_back({Diagnostic{where, 0, 0, what, expected}, "", {}, 0});
    return found.problems.back();
  };
  std::map<std::string, std::string> folder_of_op;
  for (const fs::path& folder_path : folders) {
    const std::string folder = folder_path.filename().string();
    const std::string where = folder_path.string();
    std::optional<OperatorName> op = OperatorName::from_folder(folder);
    std::optional<Schema> schema = op ? schemas.find(*op) : std::nullopt;
    if (!schema) {
      const std::string nearest = nearest_folders(folder, op, schemas);
      problem(where, "folder '" + folder + "' names no ATen operator" + (op ? " (read as " + op->display() + ")" : ""),
              "an overload with '.' written '__' (add__Tensor, relu__default) or a base name with a default overload (relu)" +
                  (nearest.empty() ? std::string() : "; the nearest: " + nearest))
          .left_out = {where};
      continue;
    }
    if (auto [existing, inserted] = folder_of_op.emplace(op->display(), folder); !inserted) {
      problem(where, "folders '" + existing->second + "' and '" + folder + "' both name " + op->display(), "one folder per operator")
          .left_out = {where};
      continue;
    }
    const KernelSignature signature = kernel_signature(*schema);
    const std::string function = kernel_function(folder);
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder_path)) {
      const std::string extension = entry.path().extension().string();
      if (entry.is_regular_file() && (extension == ".cpp" || extension == ".cu" || extension == ".py")) {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    const std::string declaration = signature.unsupported.empty() ? signature.declaration(function) : function;
    const std::string expected_file = implementation_stem(folder, 1) + ".cpp (or .cu, or .py) defining " + declaration;
    if (files.empty()) {
      problem(where, "no kernel file in the folder", expected_file).left_out = {where};
      continue;
    }
    // Each file's number; the files of a number used twice are all left out, and said in one diagnostic.
    std::map<int, std::vector<fs::path>> by_number;
    for (const fs::path& file : files) {
      const std::optional<int> number = implementation_number(folder, file.stem().string());
      if (!number) {
        problem(file.string(), "kernel file name does not follow the kernel contract",
                implementation_stem(folder, 1) + file.extension().string() + " (any <N> from 1)")
            .left_out = {file.string()};
        continue;
      }
      by_number[*number].push_back(file);
    }
    std::set<int> taken;
    for (const auto& [number, numbered] : by_number) taken.insert(number);
    const auto free_number = [&taken] {
      int number = 1;
      while (taken.count(number)) ++number;
      taken.insert(number);  // each pair is offered a number of its own
      return number;
    };
    for (const auto& [number_key, numbered_files] : by_number) {
      // copies: C++17 lambdas cannot capture structured bindings (clang refuses)
      const int number = number_key;
      const std::vector<fs::path>& numbered = numbered_files;
      const auto fail_kernel = [&](const std::string& at, const std::string& what, const std::string& expected) {
        KernelProblem& made = problem(at, what, expected);
        made.op = op->display();
        made.number = number;
        for (const fs::path& file : numbered) made.left_out.push_back(file.string());
      };
      if (numbered.size() > 1) {
        std::string layouts;
        for (const fs::path& file : numbered) {
          layouts += (layouts.empty() ? "" : ", ") + file.filename().string() + " is " + layout_of(file, function);
        }
        const int spare = free_number();
        fail_kernel(numbered.front().string(), std::to_string(numbered.size()) + " files are implementation " + std::to_string(number) + ": " + layouts,
                    "one file per implementation number: for BackendBench's pair of a .cpp declaration and its .cu "
                    "definition, keep the .cu alone (remove the .cpp); else rename one to " +
                    implementation_stem(folder, spare) + numbered.back().extension().string());
        continue;
      }
      const fs::path& file = numbered.front();
      const std::string path = fs::absolute(file).lexically_normal().string();
      // The binding #includes the kernel by path, and an #include cannot escape anything.
      if (path.find_first_of("\"\\\n\r") != std::string::npos) {
        fail_kernel(file.string(), "the kernel's path holds a '\"', a backslash or a line break", "a path that a C++ #include \"...\" can name");
        continue;
      }
      const bool is_python = file.extension() == ".py";
      const std::string text = file_text(file);
      if (check_contents && is_python && !python_defines(text, function)) {
        fail_kernel(file.string(), "the Python file does not define " + function,
                    "a module-level def " + function + "(...) (the kernel the file's name promises)");
        continue;
      }
      if (check_contents && !is_python && identifier_uses(without_comments(text), function).empty()) {
        fail_kernel(file.string(), "the file holds no kernel: nothing in it is named " + function,
                    "a definition of " + declaration);
        continue;
      }
      // A Python kernel is called boxed (any schema the dispatcher has); a C++ one needs a binding.
      if (!is_python && !signature.unsupported.empty()) {
        fail_kernel(file.string(), "kernels for " + op->display() + " cannot be bound: " + signature.unsupported,
                    "an operator whose argument and return types the harness supports (or a .py kernel)");
        continue;
      }
      KernelVariant kernel{*op, folder, number, path, file.extension() == ".cu", expected_failure_of(file)};
      kernel.expected_failure_in_suite = expected_failures_by_suite(file);
      kernel.is_python = is_python;
      if (kernel.is_python) {
        kernel.is_cuda = naming::python_kernel_needs_cuda(text);
      } else if (kernel.is_cuda) {
        kernel.has_device_part = naming::cuda_kernel_has_device_part(text);
      }
      found.kernels.push_back(kernel);
    }
  }
  return found;
}

std::vector<KernelVariant> discover_kernels(const std::string& directory, const SchemaSource& schemas) {
  FoundKernels found = find_kernels(directory, schemas, /*check_contents=*/false);
  if (!found.problems.empty()) throw DiagnosticError(found.problems.front().diagnostic);
  return std::move(found.kernels);
}

OpLibrary read_op_library(const std::string& name, const std::string& listing_path, const SchemaSource& schemas) {
  const OpLibraryListing listing = read_op_library_listing(name, listing_path);
  OpLibrary library{name, listing.unavailable, {}};
  for (const OperatorName& op : listing.operators) {
    if (!schemas.find(op)) continue;  // registered by the library for an operator this libtorch lacks
    KernelVariant variant;
    variant.op = op;
    variant.folder = op.folder();
    variant.path = name;
    variant.is_cuda = listing.is_cuda;
    variant.is_python = true;
    variant.op_library = name;
    library.operators.push_back(variant);
  }
  return library;
}

}  // namespace backendbench::model
