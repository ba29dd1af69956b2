// A kernel library's imports of its own operator; see kernel_imports.h.
#include "backendbench/kernel_imports.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <cxxabi.h>
#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "backendbench/python_bridge.h"
#include "language/naming.h"

namespace backendbench {
namespace {

std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// add_.Tensor → add: the family an operator belongs to (as no_fallback reads it).
std::string family_of(const std::string& op_display) {
  std::string name = op_display.substr(0, op_display.find('.'));
  if (name.size() > 1 && name.back() == '_' && name.compare(0, 2, "__") != 0) name.pop_back();
  return name;
}

// Whether the kernel of folder operator `served` serves `wanted`: itself, or its in-place or
// out= sibling (model.h's derive_variants, by name).
bool serves(const naming::OperatorName& served, const naming::OperatorName& wanted) {
  if (served == wanted) return true;
  if (wanted.base == served.base + "_" && wanted.overload == served.overload) return true;
  return wanted.base == served.base && (wanted.overload == "out" || wanted.overload == served.overload + "_out");
}

bool has_overload(const std::string& base, const std::string& overload) {
  return c10::Dispatcher::singleton().findSchema({"aten::" + base, overload}).has_value();
}

std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(name);
}

}  // namespace

std::vector<std::string> kernel_manifest_lines(const std::string& manifest) {
  std::vector<std::string> lines;
  std::ifstream in(manifest);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

namespace {

// Whether manifest line `line` of the set `set` (the manifest's file name less .txt) holds kernel
// `backend` of `wanted`.
bool line_holds(const std::string& line, const std::string& set, const naming::OperatorName& wanted,
                const std::string& backend, bool exactly) {
  if (line.rfind(kOpLibraryLine, 0) == 0) {
    const std::string rest = line.substr(std::strlen(kOpLibraryLine));
    return rest.substr(0, rest.find(' ')) == backend;
  }
  if (backend.size() <= 4 || backend.rfind("impl", 0) != 0) return false;
  std::string folder;
  if (line.rfind(kPythonKernelLine, 0) == 0) {
    // python <kernels>/<folder>/<folder>_implementation_<N>.py
    const std::string path = line.substr(std::strlen(kPythonKernelLine));
    const size_t slash = path.find_last_of('/');
    const size_t folder_start = slash == std::string::npos || slash == 0 ? std::string::npos : path.find_last_of('/', slash - 1);
    if (folder_start == std::string::npos) return false;
    folder = path.substr(folder_start + 1, slash - folder_start - 1);
    const std::string file = path.substr(slash + 1);
    const std::optional<int> number = naming::implementation_number(folder, file.substr(0, file.rfind('.')));
    if (!number || naming::variant_name(*number) != backend) return false;
  } else {
    const std::string prefix = "libbackendbench_kernel_" + (set == "default" ? std::string() : set + "_");
    const std::string number = "_implementation_" + backend.substr(4) + ".so";
    const std::string name = base_name(line);
    if (name.rfind(prefix, 0) != 0 || !ends_with(name, number)) return false;
    folder = name.substr(prefix.size(), name.size() - prefix.size() - number.size());
  }
  const std::optional<naming::OperatorName> served = naming::OperatorName::from_folder(folder);
  return served && (exactly ? *served == wanted : serves(*served, wanted));
}

std::string manifest_set(const std::string& manifest) {
  std::string set = base_name(manifest);
  if (ends_with(set, ".txt")) set.resize(set.size() - 4);
  return set;
}

}  // namespace

int kernel_manifest_line(const std::string& manifest, const std::string& op_display, const std::string& backend) {
  const std::optional<naming::OperatorName> wanted = naming::OperatorName::from_user(op_display);
  if (!wanted) return -1;
  const std::vector<std::string> lines = kernel_manifest_lines(manifest);
  // A kernel of the operator's own folder first, then the functional kernel that serves it (a
  // folder relu_ beside relu: relu_'s own kernel, as the registry prefers it).
  for (const bool exactly : {true, false}) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (line_holds(lines[i], manifest_set(manifest), *wanted, backend, exactly)) return static_cast<int>(i);
    }
  }
  return -1;
}

std::string kernel_file(const std::string& manifest, const std::string& op_display, const std::string& backend) {
  const int line = kernel_manifest_line(manifest, op_display, backend);
  if (line < 0) return "";
  const std::string text = kernel_manifest_lines(manifest)[static_cast<size_t>(line)];
  if (text.rfind(kOpLibraryLine, 0) == 0) return "";
  return text.rfind(kPythonKernelLine, 0) == 0 ? text.substr(std::strlen(kPythonKernelLine)) : text;
}

namespace {

std::mutex& files_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<const Backend*, std::string>& files() {
  static auto* by_backend = new std::map<const Backend*, std::string>;  // never destroyed: read at exit too
  return *by_backend;
}

}  // namespace

void set_kernel_file(const Backend& backend, std::string file) {
  std::lock_guard<std::mutex> lock(files_mutex());
  if (file.empty()) {
    files().erase(&backend);
  } else {
    files()[&backend] = std::move(file);
  }
}

std::string kernel_file_of(const Backend& backend) {
  std::lock_guard<std::mutex> lock(files_mutex());
  const auto found = files().find(&backend);
  return found == files().end() ? std::string() : found->second;
}

void forget_kernel_files() {
  std::lock_guard<std::mutex> lock(files_mutex());
  files().clear();
}

namespace {

// A 64-bit ELF file read whole, its section headers checked against its size as they are read.
class ElfFile {
 public:
  explicit ElfFile(const std::string& path) : path_(path) {
    std::ifstream in(path, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
    if (bytes_.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes_.data(), ELFMAG, SELFMAG) != 0 ||
        bytes_[EI_CLASS] != ELFCLASS64) {
      throw error("not a 64-bit ELF object");
    }
    std::memcpy(&header_, bytes_.data(), sizeof header_);
  }
  size_t sections() const { return header_.e_shnum; }
  Elf64_Shdr section(size_t index) const {
    const uint64_t at = header_.e_shoff + index * uint64_t{header_.e_shentsize};
    if (header_.e_shentsize < sizeof(Elf64_Shdr) || at + sizeof(Elf64_Shdr) > bytes_.size()) {
      throw error("a section header beyond the file");
    }
    Elf64_Shdr found;
    std::memcpy(&found, bytes_.data() + at, sizeof found);
    if (found.sh_type != SHT_NOBITS && (found.sh_offset > bytes_.size() || found.sh_size > bytes_.size() - found.sh_offset)) {
      throw error("a section beyond the file");
    }
    return found;
  }
  const char* at(uint64_t offset) const { return bytes_.data() + offset; }
  std::runtime_error error(const std::string& what) const { return std::runtime_error(path_ + ": " + what); }

 private:
  std::string path_;
  std::string bytes_;
  Elf64_Ehdr header_{};
};

// The characters of a symbol's or an operator's name: what a name looked up at run time is made of.
bool is_name_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.'; }

}  // namespace

std::vector<std::string> undefined_symbols(const std::string& library) {
  const ElfFile file(library);
  std::vector<std::string> symbols;
  for (size_t i = 0; i < file.sections(); ++i) {
    const Elf64_Shdr table = file.section(i);
    if (table.sh_type != SHT_DYNSYM || table.sh_entsize < sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr names = file.section(table.sh_link);
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= table.sh_size; at += table.sh_entsize) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, file.at(table.sh_offset + at), sizeof symbol);
      if (symbol.st_shndx != SHN_UNDEF || symbol.st_name == 0 || symbol.st_name >= names.sh_size) continue;
      const char* name = file.at(names.sh_offset + symbol.st_name);
      if (std::memchr(name, '\0', names.sh_size - symbol.st_name) == nullptr) throw file.error("a symbol name without its end");
      symbols.push_back(demangled(name));
    }
  }
  return symbols;
}

std::vector<std::string> data_names(const std::string& library) {
  const ElfFile file(library);
  std::vector<std::string> found;
  for (size_t i = 0; i < file.sections(); ++i) {
    const Elf64_Shdr data = file.section(i);
    // The loaded data a pointer handed to dlsym or the dispatcher can point into: .rodata, .data
    // and their kin; not code, not the symbol tables (what it imports is read above).
    if (data.sh_type != SHT_PROGBITS || (data.sh_flags & SHF_ALLOC) == 0 || (data.sh_flags & SHF_EXECINSTR) != 0) continue;
    const char* begin = file.at(data.sh_offset);
    const char* const end = begin + data.sh_size;
    for (const char* text = begin; text < end;) {
      const char* const stop = static_cast<const char*>(std::memchr(text, '\0', static_cast<size_t>(end - text)));
      if (stop == nullptr) break;  // no string ends in the rest
      // The name characters before the string's end: a name stored as the tail of a longer
      // string (the linker merges a string into another that ends with it) is read too.
      const char* name = stop;
      while (name > text && is_name_character(name[-1])) --name;
      if (stop - name >= 4) found.emplace_back(name, stop);
      text = stop + 1;
    }
  }
  return found;
}

bool is_operator_name_of(const std::string& text, const std::string& family) {
  const std::string aten = "aten::";
  const size_t at = text.rfind(aten);
  if (at == std::string::npos) return false;
  const std::string name = text.substr(at + aten.size(), text.find('.', at) - at - aten.size());
  return name == family || name == family + "_";
}

bool is_entry_point_of(const std::string& symbol, const std::string& family) {
  static const char* const kImplementations[] = {"at::cpu::", "at::cuda::", "at::native::", "at::compositeexplicitautograd::",
                                                 "at::compositeimplicitautograd::",
                                                 "at::compositeexplicitautogradnonfunctional::"};
  for (const char* space : kImplementations) {
    const size_t length = std::strlen(space);
    if (symbol.compare(0, length, space) != 0) continue;
    const std::string function = symbol.substr(length, symbol.find('(') - length);
    for (const std::string& form : {family, family + "_", family + "_out", family + "_outf", family + "_symint"}) {
      if (function == form) return true;
    }
  }
  // at::_ops::<base>[_<overload>]::call / ::redispatch: the overload read back against libtorch's
  // own (max_pool2d is not max's overload pool2d).
  const std::string ops = "at::_ops::";
  if (symbol.compare(0, ops.size(), ops) != 0) return false;
  const size_t end = symbol.find("::", ops.size());
  if (end == std::string::npos) return false;
  const std::string member = symbol.substr(end + 2, symbol.find('(', end) - end - 2);
  if (member != "call" && member != "redispatch") return false;
  const std::string name = symbol.substr(ops.size(), end - ops.size());
  if (name == family || name == family + "_") return true;
  if (name.compare(0, family.size() + 2, family + "__") == 0) return has_overload(family + "_", name.substr(family.size() + 2));
  if (name.compare(0, family.size() + 1, family + "_") == 0) return has_overload(family, name.substr(family.size() + 1));
  return false;
}

namespace {

// What `reader` finds in `library` for the family `family`, read once per process for each
// reader, library and family (a kernel's file does not change while a run reads it).
using FamilyReader = std::vector<std::string> (*)(const std::string& library, const std::string& family);
const std::vector<std::string>& read_once(FamilyReader reader, const std::string& library, const std::string& family) {
  static std::mutex mutex;
  static std::map<std::tuple<FamilyReader, std::string, std::string>, std::vector<std::string>> read;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(reader, library, family);
  const auto found = read.find(key);
  if (found != read.end()) return found->second;
  return read.emplace(key, reader(library, family)).first->second;
}

std::vector<std::string> imported_entry_points(const std::string& library, const std::string& family) {
  std::vector<std::string> imports;
  for (const std::string& symbol : undefined_symbols(library)) {
    if (is_entry_point_of(symbol, family)) imports.push_back(symbol);
  }
  return imports;
}

std::vector<std::string> named_entry_points(const std::string& library, const std::string& family) {
  std::vector<std::string> names;
  const auto add = [&](std::string name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  };
  for (const std::string& text : data_names(library)) {
    if (is_operator_name_of(text, family)) add(text.substr(text.rfind("aten::")));
    // A mangled symbol anywhere in the name's tail (after a longer string's head).
    for (size_t at = text.find("_Z"); at != std::string::npos; at = text.find("_Z", at + 2)) {
      const std::string symbol = demangled(text.c_str() + at);
      if (symbol.compare(0, 2, "_Z") != 0 && is_entry_point_of(symbol, family)) add(symbol);
    }
  }
  return names;
}

}  // namespace

const std::vector<std::string>& fallback_imports(const std::string& library, const std::string& op_display) {
  return read_once(imported_entry_points, library, family_of(op_display));
}

const std::vector<std::string>& fallback_names(const std::string& library, const std::string& op_display) {
  return read_once(named_entry_points, library, family_of(op_display));
}

std::vector<SourceName> python_redispatches(const std::string& source) {
  std::ifstream in(source, std::ios::binary);
  if (!in) throw std::runtime_error(source + ": cannot be read");
  static const char* const kBelowTheObserver[] = {"redispatch", "redispatch_boxed", "_op_dk"};
  const auto word_character = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<SourceName> found;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    // Its comment left out: a '#' outside the quotes the line opens and closes (a name there
    // calls nothing).
    char quote = 0;
    for (size_t at = 0; at < line.size(); ++at) {
      if (quote != 0 && line[at] == '\\') {
        ++at;
      } else if (quote != 0) {
        if (line[at] == quote) quote = 0;
      } else if (line[at] == '\'' || line[at] == '"') {
        quote = line[at];
      } else if (line[at] == '#') {
        line.resize(at);
      }
    }
    for (size_t at = 0; at < line.size();) {
      if (!word_character(line[at])) {
        ++at;
        continue;
      }
      size_t end = at;
      while (end < line.size() && word_character(line[end])) ++end;
      const std::string word = line.substr(at, end - at);
      for (const char* name : kBelowTheObserver) {
        if (word == name) found.push_back({number, static_cast<int>(at + 1), word});
      }
      at = end;
    }
  }
  return found;
}

}  // namespace backendbench
