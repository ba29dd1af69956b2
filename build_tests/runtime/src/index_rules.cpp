// The application of index-argument rules (the rules themselves: operator_facts.cpp).
#include "backendbench/index_rules.h"

#include "backendbench/operator_facts.h"

#include <stdexcept>

#include "language/naming.h"

namespace backendbench {
namespace {

int64_t argument_position(const c10::FunctionSchema& schema, const char* name) {
  const auto& arguments = schema.arguments();
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].name() == name) return static_cast<int64_t>(i);
  }
  throw std::logic_error(std::string("index rule names '") + name + "', which " + schema.name() + " does not have");
}

// Integers in [0, upper) with the shape, dtype and device of `like`.
at::Tensor valid_indices(const at::Tensor& like, int64_t upper, at::Generator& generator) {
  if (like.numel() > 0 && upper <= 0) {
    throw std::invalid_argument("cannot draw indices below " + std::to_string(upper) + " for a non-empty index tensor");
  }
  return at::randint(0, std::max<int64_t>(upper, 1), like.sizes(), generator, at::TensorOptions().dtype(at::kLong))
      .to(like.device(), like.scalar_type());
}

}  // namespace

std::string display_name(const c10::FunctionSchema& schema) {
  const std::string& name = schema.name();  // aten::relu
  const size_t separator = name.find("::");
  const naming::OperatorName op{name.substr(0, separator), name.substr(separator + 2),
                               schema.overload_name().empty() ? "default" : schema.overload_name()};
  return op.display();
}

void apply_index_rules(const c10::FunctionSchema& schema, const std::string& op_display, std::vector<c10::IValue>& stack,
                       at::Generator& generator, const std::vector<bool>& given) {
  for (const IndexRule& rule : facts_of(op_display).index_rules) {
    const int64_t position = argument_position(schema, rule.argument);
    if (static_cast<size_t>(position) < given.size() && given[position]) continue;
    c10::IValue& target = stack[position];
    const c10::IValue& source = stack[argument_position(schema, rule.source)];
    switch (rule.bound) {
      case IndexBound::kSizeOfArgument: {
        const at::Tensor bound = source.toTensor();
        const int64_t dim = rule.dimension < 0 ? bound.dim() + rule.dimension : rule.dimension;
        target = valid_indices(target.toTensor(), bound.dim() == 0 ? 1 : bound.size(dim), generator);
        break;
      }
      case IndexBound::kValueOfArgument:
        target = valid_indices(target.toTensor(), source.toInt(), generator);
        break;
      case IndexBound::kSizeAtDimArgument: {
        const at::Tensor bound = source.toTensor();
        const int64_t dim = stack[argument_position(schema, rule.dim_argument)].toInt();
        target = valid_indices(target.toTensor(), bound.dim() == 0 ? 1 : bound.size(dim), generator);
        break;
      }
      case IndexBound::kListPositions: {
        const at::Tensor bound = source.toTensor();
        c10::List<std::optional<at::Tensor>> indices = target.to<c10::List<std::optional<at::Tensor>>>();
        for (size_t i = 0; i < indices.size(); ++i) {
          std::optional<at::Tensor> index = indices.get(i);
          // Boolean masks are valid as drawn; integer indices must stay inside dimension i.
          if (index && !at::isIntegralType(index->scalar_type(), /*includeBool=*/false)) continue;
          if (index && static_cast<int64_t>(i) < bound.dim()) indices.set(i, valid_indices(*index, bound.size(i), generator));
        }
        target = indices;
        break;
      }
      case IndexBound::kBagOffsets: {
        const at::Tensor offsets = target.toTensor();
        const int64_t count = source.toTensor().numel();
        at::Tensor values =
            std::get<0>(at::randint(0, count + 1, offsets.sizes(), generator, at::TensorOptions().dtype(at::kLong)).sort());
        if (values.numel() > 0) values[0] = 0;
        target = values.to(offsets.device(), offsets.scalar_type());
        break;
      }
      case IndexBound::kOffsetToBag: {
        const at::Tensor offsets = source.toTensor().to(at::kCPU, at::kLong);
        const at::Tensor like = target.toTensor();
        const at::Tensor positions = at::arange(like.numel(), at::TensorOptions().dtype(at::kLong));
        const at::Tensor bags = at::searchsorted(offsets, positions, /*out_int32=*/false, /*right=*/true) - 1;
        target = bags.clamp_min(0).reshape(like.sizes()).to(like.device(), like.scalar_type());
        break;
      }
      case IndexBound::kPoolingIndices: {
        // max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)
        const auto window = [&](const char* name) { return stack[argument_position(schema, name)].toIntVector(); };
        const at::Tensor input = source.toTensor();
        auto pooled = at::max_pool2d_with_indices(input, window("kernel_size"), window("stride"), window("padding"),
                                                  window("dilation"), stack[argument_position(schema, "ceil_mode")].toBool());
        target = std::get<1>(pooled).contiguous();
        break;
      }
      case IndexBound::kSparseIndices: {
        const at::Tensor like = target.toTensor();
        const std::vector<int64_t> size = source.toIntVector();
        std::vector<at::Tensor> rows;
        for (int64_t d = 0; d < like.size(0); ++d) rows.push_back(valid_indices(like[d], size.at(d), generator));
        target = rows.empty() ? like : at::stack(rows);
        break;
      }
      case IndexBound::kUnitRange: {
        const at::Tensor like = target.toTensor();
        const at::Tensor values = at::rand(like.sizes(), generator, at::TensorOptions().dtype(at::kFloat)) * 2 - 1;
        target = values.to(like.device(), like.scalar_type());
        break;
      }
    }
  }
}

}  // namespace backendbench
