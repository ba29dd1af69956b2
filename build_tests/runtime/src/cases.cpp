// The registry generated case tables add themselves to at start-up.
#include "backendbench/cases.h"

namespace backendbench {

static std::vector<const OperatorSpec*>& mutable_registry() {
  static std::vector<const OperatorSpec*> operators;
  return operators;
}

void register_operator(const OperatorSpec* spec) { mutable_registry().push_back(spec); }
const std::vector<const OperatorSpec*>& registered_operators() { return mutable_registry(); }

}  // namespace backendbench
