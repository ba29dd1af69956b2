// A SchemaSource with a handful of real ATen schemas, so model and emitter tests run without
// libtorch.
#pragma once

#include <map>

#include "model/schema.h"

namespace backendbench::testing {

class FakeSchemaSource : public model::SchemaSource {
 public:
  FakeSchemaSource() {
    using model::Schema;
    add("relu.default", {"aten::relu(Tensor self) -> Tensor", {{"self", "Tensor"}}, {{"Tensor"}}});
    add("leaky_relu.default", {"aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
                               {{"self", "Tensor"}, {"negative_slope", "Scalar"}}, {{"Tensor"}}});
    add("add.Tensor", {"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                       {{"self", "Tensor"}, {"other", "Tensor"}, {"alpha", "Scalar"}}, {{"Tensor"}}});
    add("add.Scalar", {"aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
                       {{"self", "Tensor"}, {"other", "Scalar"}, {"alpha", "Scalar"}}, {{"Tensor"}}});
    add("add_.Tensor", {"aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                        {{"self", "Tensor", true}, {"other", "Tensor"}, {"alpha", "Scalar"}}, {{"Tensor", true}}});
    add("add.out", {"aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
                    {{"self", "Tensor"}, {"other", "Tensor"}, {"alpha", "Scalar"}, {"out", "Tensor", true}},
                    {{"Tensor", true}}});
    add("sum.dim_IntList", {"aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                            {{"self", "Tensor"}, {"dim", "int[]?"}, {"keepdim", "bool"}, {"dtype", "ScalarType?"}},
                            {{"Tensor"}}});
    add("bernoulli_.float", {"aten::bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
                             {{"self", "Tensor", true}, {"p", "float"}, {"generator", "Generator?"}}, {{"Tensor", true}},
                             /*random_by_design=*/true});
    add("align_to.default", {"aten::align_to(Tensor(a) self, Dimname[] names) -> Tensor(a)",
                             {{"self", "Tensor"}, {"names", "Dimname[]"}}, {{"Tensor"}}});
  }

  std::optional<model::Schema> find(const model::OperatorName& op) const override {
    auto found = schemas_.find(op.display());
    if (found == schemas_.end()) return std::nullopt;
    return found->second;
  }
  std::vector<model::OperatorName> names() const override {
    std::vector<model::OperatorName> names;
    for (const auto& [name, schema] : schemas_) names.push_back(*model::OperatorName::from_user(name));
    return names;
  }

 private:
  void add(const std::string& name, model::Schema schema) { schemas_[name] = std::move(schema); }
  std::map<std::string, model::Schema> schemas_;
};

}  // namespace backendbench::testing
