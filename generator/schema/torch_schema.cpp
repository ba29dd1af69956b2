// Schema lookup through c10::Dispatcher.
#include "schema/torch_schema.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <sstream>

namespace backendbench::schema {
namespace {

// int[] with N → int[2], as the schema text spells fixed-size lists.
std::string type_text(const c10::Argument& argument) {
  std::string text = argument.real_type()->str();
  if (argument.N() && text.size() > 2 && text.compare(text.size() - 2, 2, "[]") == 0) {
    text = text.substr(0, text.size() - 2) + "[" + std::to_string(*argument.N()) + "]";
  }
  return text;
}

bool is_write(const c10::Argument& argument) { return argument.alias_info() && argument.alias_info()->isWrite(); }

}  // namespace

std::optional<model::Schema> TorchSchemaSource::find(const model::OperatorName& op) const {
  auto handle = c10::Dispatcher::singleton().findSchema({op.schema_name(), op.schema_overload()});
  if (!handle) return std::nullopt;
  const c10::FunctionSchema& function = handle->schema();
  model::Schema schema;
  std::ostringstream text;
  text << function;
  schema.text = text.str();
  for (const c10::Argument& argument : function.arguments()) {
    schema.arguments.push_back({argument.name(), type_text(argument), is_write(argument)});
  }
  for (const c10::Argument& value : function.returns()) schema.returns.push_back({type_text(value), is_write(value)});
  schema.random_by_design = handle->hasTag(at::Tag::nondeterministic_seeded);
  return schema;
}

std::vector<model::OperatorName> TorchSchemaSource::names() const {
  std::vector<model::OperatorName> names;
  for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
    const size_t colons = name.name.find("::");
    if (colons == std::string::npos) continue;
    names.push_back({name.name.substr(0, colons), name.name.substr(colons + 2),
                     name.overload_name.empty() ? "default" : name.overload_name});
  }
  return names;
}

}  // namespace backendbench::schema
