// Checks a FACTO specification against its operator's schema (the installed libtorch's text):
// every argument it names exists, in the schema's order; positional ones are the schema's first
// positional ones; keyword-only ones are written as keywords; none without a default is missing.
#pragma once

#include <string>
#include <vector>

#include "facto/spec.h"

namespace backendbench::facto {

struct SchemaParameter {
  std::string name;
  bool has_default = false;
  bool keyword_only = false;
};

// The parameters of a schema text: "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
std::vector<SchemaParameter> schema_parameters(const std::string& schema_text);

// Throws DiagnosticError at the spec's line when it does not fit the schema.
void check_against_schema(const OperatorSpec& spec, const std::string& schema_text);

}  // namespace backendbench::facto
