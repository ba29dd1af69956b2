// What the generator needs to know of an operator's schema, and the mapping of schema types
// to the C++ types of a kernel's signature (the ones TORCH_LIBRARY_IMPL accepts). The lookup
// itself lives in torch_schema.h so that this part builds and tests without libtorch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "language/naming.h"

namespace backendbench::model {

// The model speaks the language library's names (naming.h owns them).
using naming::OperatorName;
using naming::matches_filter;
using naming::default_overload;
using naming::resolve_trace_alias;
using naming::kernel_function;
using naming::implementation_stem;
using naming::implementation_number;
using naming::variant_name;
using naming::ctest_name;
using naming::benchmark_name;
using naming::case_name;
using naming::stable_hash;
using naming::is_identifier;

struct SchemaArgument {
  std::string name;
  std::string type;  // schema spelling: Tensor, Tensor?, int[], SymInt[], Scalar, bool[3], ...
  bool is_write = false;  // Tensor(a!)
};

struct SchemaReturn {
  std::string type;
  bool is_write = false;
};

struct Schema {
  std::string text;  // aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  std::vector<SchemaArgument> arguments;
  std::vector<SchemaReturn> returns;
  // libtorch's nondeterministic_seeded tag: the output is random by design (bernoulli,
  // dropout, rand_like, ...), so no reference can agree with it.
  bool random_by_design = false;
};

// C++ parameter type for a schema argument; nullopt when the harness cannot bind it.
std::optional<std::string> cpp_argument_type(const SchemaArgument& argument);
// C++ return type ("void" for none); nullopt when unsupported.
std::optional<std::string> cpp_return_type(const std::vector<SchemaReturn>& returns);

// The kernel's expected C++ signature, or the reason there is none.
struct KernelSignature {
  std::string return_type;
  std::vector<std::string> parameter_types;
  std::vector<std::string> parameter_names;
  std::string unsupported;  // non-empty: why this schema cannot be bound

  // "at::Tensor(const at::Tensor&, ...)" — a function type, for static_assert.
  std::string function_type() const;
  // "at::Tensor relu__default_kernel_impl(const at::Tensor& self)" — for messages and docs.
  std::string declaration(const std::string& function_name) const;
};
KernelSignature kernel_signature(const Schema& schema);

class SchemaSource {
 public:
  virtual ~SchemaSource() = default;
  virtual std::optional<Schema> find(const OperatorName& op) const = 0;
  // Every operator name the source knows, for hints (the nearest names to a misspelt one); a
  // source that cannot list them gives none.
  virtual std::vector<OperatorName> names() const { return {}; }
};

}  // namespace backendbench::model
