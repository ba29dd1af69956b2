// SchemaSource backed by the operator registry of the libtorch the generator links, so that
// generated signatures match the libtorch the suite is built against.
#pragma once

#include "model/schema.h"

namespace backendbench::schema {

class TorchSchemaSource : public model::SchemaSource {
 public:
  std::optional<model::Schema> find(const model::OperatorName& op) const override;
  std::vector<model::OperatorName> names() const override;
};

}  // namespace backendbench::schema
