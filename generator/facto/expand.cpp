// Expands FACTO specifications into trace-language cases; see expand.h.
#include "facto/expand.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace backendbench::facto {
namespace {

using Shape = std::vector<int64_t>;

// The shape of each rank before any edge: no size-1 and no repeated-looking sizes, so a kernel
// that swaps two dims or drops one gets a different answer.
Shape base_shape(int rank) {
  static const std::vector<Shape> shapes = {{}, {7}, {3, 5}, {2, 3, 4}, {2, 3, 2, 5}, {2, 3, 2, 2, 3}, {2, 2, 3, 2, 2, 3}};
  return shapes.at(static_cast<size_t>(rank));
}

int base_rank(const ArgumentSpec& tensor) { return std::clamp(2, tensor.rank_min, tensor.rank_max); }

Shape base_of(const ArgumentSpec& tensor) { return tensor.has_base ? tensor.base : base_shape(base_rank(tensor)); }

// Strides of a transposed view (the last two dims swapped in memory), or a stride-2 slice for 1-D.
Shape transposed_strides(const Shape& shape) {
  if (shape.size() == 1) return {2};
  Shape order = shape;
  std::swap(order[order.size() - 1], order[order.size() - 2]);
  Shape strides(order.size(), 1);
  for (size_t d = order.size() - 1; d-- > 0;) strides[d] = strides[d + 1] * std::max<int64_t>(order[d + 1], 1);
  std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
  return strides;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(shape[d], 1);
  return strides;
}

// The values a tensor of `elements` elements gets for the special-values edge: NaN, both
// infinities, both zeros, denormals (f32's), numbers either side of 0, and the largest f32.
std::string special_values(int64_t elements) {
  static const std::vector<std::string> specials = {"nan", "inf", "-inf", "-0.0", "0.0", "1e-40", "-1e-40",
                                                    "1.5", "-2.5", "3.4028234663852886e+38"};
  std::string text = "[";
  for (int64_t i = 0; i < elements; ++i) text += (i ? ", " : "") + specials[static_cast<size_t>(i) % specials.size()];
  return text + "]";
}

// One argument's choice in a case.
struct Choice {
  std::string dtype;  // tensor
  Shape shape;        // free tensor
  Shape strides;      // empty means contiguous
  bool specials = false;  // free tensor: its values are special_values()
  bool number = false;    // dependent tensor: written as its spec's Python number instead
  int variant = 0;    // dependent tensor: which shape of its rule (0: the plain one)
  int64_t dim = 0;    // dim
  Shape dims;         // dims
  size_t value = 0;   // values, dtype: the index of the value
  bool flag = false;  // bool
};

using Case = std::vector<Choice>;

size_t index_of(const OperatorSpec& spec, const std::string& name) {
  for (size_t i = 0; i < spec.arguments.size(); ++i) {
    if (spec.arguments[i].name == name) return i;
  }
  return 0;  // parse_specs guarantees every `of` names an earlier argument
}

std::string torch_dtype(const std::string& abbreviation) {
  static const std::map<std::string, std::string> names = {
      {"f32", "torch.float32"}, {"f16", "torch.float16"}, {"bf16", "torch.bfloat16"}, {"f64", "torch.float64"},
      {"i8", "torch.int8"},     {"i16", "torch.int16"},   {"i32", "torch.int32"},     {"i64", "torch.int64"},
      {"u8", "torch.uint8"},    {"b8", "torch.bool"}};
  return names.at(abbreviation);
}

std::string list_text(const Shape& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string tuple_text(const Shape& values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + (values.size() == 1 ? ",)" : ")");
}

class Expander {
 public:
  explicit Expander(const OperatorSpec& spec) : spec_(spec) {}

  Case base() const {
    Case chosen(spec_.arguments.size());
    for (size_t i = 0; i < spec_.arguments.size(); ++i) {
      const ArgumentSpec& argument = spec_.arguments[i];
      if (argument.kind == ArgumentKind::kTensor) {
        chosen[i].dtype = argument.dtypes.empty() ? "" : argument.dtypes.front();  // "": its `of` tensor's
        if (argument.shape == ShapeRule::kFree) chosen[i].shape = base_of(argument);
      } else if (argument.kind == ArgumentKind::kDims) {
        chosen[i].dims = {0};
      }
    }
    return chosen;
  }

  // The shapes a dependent tensor's rule gives, by variant, for the shape it follows.
  static std::vector<std::pair<std::string, Shape>> rule_shapes(ShapeRule rule, const Shape& of) {
    switch (rule) {
      case ShapeRule::kSame:
        return {{"same shape", of}};
      case ShapeRule::kBroadcast:
      case ShapeRule::kInto: {
        std::vector<std::pair<std::string, Shape>> shapes = {{"same shape", of}};
        if (of.size() >= 2) shapes.push_back({"broadcast: fewer dims", Shape(of.begin() + 1, of.end())});
        if (!of.empty()) {
          Shape first = of, last = of;
          first.front() = 1;
          last.back() = 1;
          shapes.push_back({"broadcast: size-1 dim 0", first});
          if (of.size() >= 2) shapes.push_back({"broadcast: size-1 last dim", last});
          shapes.push_back({"broadcast: 0-dim", {}});
        }
        if (rule == ShapeRule::kBroadcast) {
          Shape larger = of;
          larger.insert(larger.begin(), 4);
          shapes.push_back({"broadcast: larger (the first operand broadcasts)", larger});
        }
        return shapes;
      }
      case ShapeRule::kMatmul:
        return {{"matmul", {of.size() >= 2 ? of[of.size() - 1] : 1, 4}}};
      case ShapeRule::kBatchMatmul:
        return {{"bmm", {of.empty() ? 1 : of.front(), of.size() >= 3 ? of.back() : 1, 4}}};
      case ShapeRule::kLastDim:
        return {{"last dim", {of.empty() ? 1 : of.back()}}};
      case ShapeRule::kChannels:
        return {{"channels", {of.size() >= 2 ? of[1] : 1}}};
      case ShapeRule::kFree:
        break;
    }
    return {{"", of}};
  }

  // The shape and dtype of tensor `i` in `chosen`, following its rule.
  std::pair<Shape, std::string> tensor_of(const Case& chosen, size_t i) const {
    const ArgumentSpec& argument = spec_.arguments[i];
    if (argument.shape == ShapeRule::kFree) return {chosen[i].shape, chosen[i].dtype};
    const auto [of_shape, of_dtype] = tensor_of(chosen, index_of(spec_, argument.of));
    const auto shapes = rule_shapes(argument.shape, of_shape);
    const Shape shape = shapes[std::min<size_t>(static_cast<size_t>(chosen[i].variant), shapes.size() - 1)].second;
    return {shape, chosen[i].dtype.empty() ? of_dtype : chosen[i].dtype};
  }

  // Every way to vary the base case, one list per axis, in a fixed order.
  std::vector<std::vector<std::pair<std::string, Case>>> axes() const {
    std::vector<std::vector<std::pair<std::string, Case>>> all;
    const Case start = base();
    size_t first = 0;
    while (!(spec_.arguments[first].kind == ArgumentKind::kTensor && spec_.arguments[first].shape == ShapeRule::kFree)) ++first;
    const ArgumentSpec& primary = spec_.arguments[first];
    const int rank = static_cast<int>(base_of(primary).size());
    const std::string& name = primary.name;

    std::vector<std::pair<std::string, Case>> dtypes, ranks, edges;
    for (const std::string& dtype : primary.dtypes) {
      Case varied = start;
      varied[first].dtype = dtype;
      dtypes.push_back({"dtype " + dtype, varied});
    }
    for (int r = primary.rank_min; r <= primary.rank_max && primary.edges && !primary.has_base; ++r) {
      if (r == rank) continue;
      Case varied = start;
      varied[first].shape = base_shape(r);
      ranks.push_back({r == 0 ? name + ": 0-dim" : name + ": rank " + std::to_string(r), varied});
    }
    if (rank >= 1 && primary.edges) {
      const Shape shape = base_of(primary);
      if (primary.allow_empty) {
        Case varied = start;
        varied[first].shape.front() = 0;
        edges.push_back({name + ": size-0 dim (empty)", varied});
      }
      Case ones = start;
      ones[first].shape.front() = 1;
      edges.push_back({name + ": size-1 dim 0", ones});
      if (primary.allow_strided) {
        Case strided = start;
        strided[first].strides = transposed_strides(shape);
        edges.push_back({name + (rank == 1 ? ": non-contiguous (every other element)" : ": non-contiguous (transposed)"),
                         strided});
      }
      Case odd = start;
      odd[first].shape.back() = 1031;
      edges.push_back({name + ": odd length past a vector width", odd});
      if (primary.allow_expanded && shape.front() > 1) {
        Case expanded = start;
        expanded[first].strides = contiguous_strides(shape);
        expanded[first].strides.front() = 0;
        edges.push_back({name + ": expanded (zero stride)", expanded});
      }
    }
    // NaN, infinities, signed zeros and denormals, in the first floating dtype it takes.
    const auto floating = std::find_if(primary.dtypes.begin(), primary.dtypes.end(), [](const std::string& dtype) {
      return dtype == "f32" || dtype == "f64" || dtype == "f16" || dtype == "bf16";
    });
    if (primary.allow_specials && primary.edges && floating != primary.dtypes.end()) {
      Case special = start;
      special[first].dtype = *floating;
      special[first].specials = true;
      edges.push_back({name + ": special values (nan, inf, -0.0, denormal) in " + *floating, special});
    }
    all.push_back(dtypes);
    all.push_back(edges);
    all.push_back(ranks);

    for (size_t i = 0; i < spec_.arguments.size(); ++i) {
      const ArgumentSpec& argument = spec_.arguments[i];
      std::vector<std::pair<std::string, Case>> axis;
      if (argument.kind == ArgumentKind::kTensor && argument.shape != ShapeRule::kFree) {
        const auto shapes = rule_shapes(argument.shape, tensor_of(start, index_of(spec_, argument.of)).first);
        for (size_t variant = 1; variant < shapes.size(); ++variant) {
          Case varied = start;
          varied[i].variant = static_cast<int>(variant);
          axis.push_back({argument.name + ": " + shapes[variant].first, varied});
        }
        const Shape plain = shapes.front().second;
        const bool elementwise = argument.shape == ShapeRule::kSame || argument.shape == ShapeRule::kBroadcast ||
                                 argument.shape == ShapeRule::kInto;
        if (elementwise && argument.allow_strided && !plain.empty() && (plain.size() >= 2 || plain.front() > 1)) {
          Case varied = start;
          varied[i].strides = transposed_strides(plain);
          axis.push_back({argument.name + (plain.size() == 1 ? ": non-contiguous (every other element)"
                                                              : ": non-contiguous (transposed)"),
                          varied});
        }
        for (size_t d = 1; d < argument.dtypes.size(); ++d) {
          Case varied = start;
          varied[i].dtype = argument.dtypes[d];
          axis.push_back({argument.name + ": dtype " + argument.dtypes[d], varied});
        }
        if (!argument.number.empty()) {
          Case varied = start;
          varied[i].number = true;
          axis.push_back({argument.name + ": a Python number (" + argument.number + ")", varied});
        }
        for (const std::string& dtype : argument.promotions) {
          Case varied = start;
          varied[i].dtype = dtype;
          axis.push_back({argument.name + ": dtype " + dtype + " (promotion)", varied});
        }
      } else if (argument.kind == ArgumentKind::kTensor && i != first) {
        for (size_t d = 1; d < argument.dtypes.size(); ++d) {
          Case varied = start;
          varied[i].dtype = argument.dtypes[d];
          axis.push_back({argument.name + ": dtype " + argument.dtypes[d], varied});
        }
      } else if (argument.kind == ArgumentKind::kDim || argument.kind == ArgumentKind::kDims) {
        const int of_rank = static_cast<int>(tensor_of(start, index_of(spec_, argument.of)).first.size());
        const int low = of_rank == 0 ? -1 : -of_rank, high = of_rank == 0 ? 0 : of_rank - 1;
        for (int d = low; d <= high; ++d) {
          if (d == 0) continue;
          Case varied = start;
          varied[i].dim = d;
          varied[i].dims = {d};
          axis.push_back({argument.name + " " + std::to_string(d), varied});
        }
        if (argument.kind == ArgumentKind::kDims && of_rank >= 2) {
          Case varied = start;
          varied[i].dims = {0, -1};
          axis.push_back({argument.name + " [0, -1]", varied});
        }
      } else if (argument.kind == ArgumentKind::kValues || argument.kind == ArgumentKind::kDtype) {
        const size_t count = argument.kind == ArgumentKind::kValues ? argument.values.size() : argument.dtypes.size();
        for (size_t v = 1; v < count; ++v) {
          Case varied = start;
          varied[i].value = v;
          axis.push_back({argument.name + " = " + (argument.kind == ArgumentKind::kValues ? argument.values[v]
                                                                                           : argument.dtypes[v]),
                          varied});
        }
      } else if (argument.kind == ArgumentKind::kBool) {
        Case varied = start;
        varied[i].flag = true;
        axis.push_back({argument.name + " = True", varied});
      }
      all.push_back(axis);
    }
    return all;
  }

  std::string text(const Case& chosen) const {
    std::string positional, keywords;
    size_t positional_count = 0;
    for (size_t i = 0; i < spec_.arguments.size(); ++i) {
      const ArgumentSpec& argument = spec_.arguments[i];
      const Choice& choice = chosen[i];
      std::string value;
      switch (argument.kind) {
        case ArgumentKind::kTensor: {
          if (choice.number) {
            value = argument.number;
            break;
          }
          const auto [shape, dtype] = tensor_of(chosen, i);
          value = "T(" + list_text(shape) + ", " + dtype;
          if (!choice.strides.empty() && choice.strides.size() == shape.size()) value += ", stride=" + tuple_text(choice.strides);
          if (choice.specials) {
            int64_t elements = 1;
            for (int64_t size : shape) elements *= size;
            value += ", values=" + special_values(elements);
          }
          value += ")";
          break;
        }
        case ArgumentKind::kDim:
          value = std::to_string(choice.dim);
          break;
        case ArgumentKind::kDims:
          value = list_text(choice.dims);
          break;
        case ArgumentKind::kLastSize: {
          const Shape of = tensor_of(chosen, index_of(spec_, argument.of)).first;
          value = list_text({of.empty() ? 1 : of.back()});
          break;
        }
        case ArgumentKind::kBool:
          value = choice.flag ? "True" : "False";
          break;
        case ArgumentKind::kValues:
          value = argument.values[choice.value];
          break;
        case ArgumentKind::kDtype:
          value = torch_dtype(argument.dtypes[choice.value]);
          break;
        case ArgumentKind::kNone:
          value = "None";
          break;
      }
      if (argument.keyword) {
        keywords += (keywords.empty() ? "'" : ", '") + argument.name + "': " + value;
      } else {
        positional += (positional.empty() ? "" : ", ") + value;
        ++positional_count;
      }
    }
    return "((" + positional + (positional_count == 1 ? ",)" : ")") + ", {" + keywords + "})";
  }

 private:
  const OperatorSpec& spec_;
};

}  // namespace

std::vector<FactoCase> expand(const OperatorSpec& spec, size_t max_cases) {
  const Expander expander(spec);
  std::vector<FactoCase> cases;
  std::set<std::string> seen;
  const auto add = [&](const std::string& probe, const Case& chosen) {
    std::string arguments = expander.text(chosen);
    if (cases.size() < max_cases && seen.insert(arguments).second) cases.push_back({probe, std::move(arguments)});
  };
  // The dtype sweep's first case is the base case; then one from each axis in turn.
  const auto axes = expander.axes();
  size_t longest = 0;
  for (const auto& axis : axes) longest = std::max(longest, axis.size());
  for (size_t round = 0; round < longest && cases.size() < max_cases; ++round) {
    for (const auto& axis : axes) {
      if (round < axis.size()) add(axis[round].first, axis[round].second);
    }
  }
  return cases;
}

std::string suite_text(const std::vector<OperatorSpec>& specs, size_t max_cases, const std::vector<std::string>& sources) {
  std::string text =
      "# @generated by backendbench-gen facto: the FACTO suite, expanded from the specifications in\n"
      "# generator/facto/specs/ (at most " +
      std::to_string(max_cases) + " cases an operator). Do not edit; edit the specifications.\n";
  for (const std::string& source : sources) text += "#   " + source + "\n";
  for (const OperatorSpec& spec : specs) {
    text += "Operator: " + spec.op + "\n";
    for (const FactoCase& item : expand(spec, max_cases)) {
      text += "# facto: " + item.probe + "\n";
      text += "cnt: 1, " + item.arguments + "\n";
    }
  }
  return text;
}

}  // namespace backendbench::facto
