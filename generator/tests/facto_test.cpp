// The FACTO stage: one test per diagnostic of a bad specification, the expansion's edges and
// bound, its determinism, and the schema check.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "facto/expand.h"
#include "facto/schema_check.h"
#include "facto/spec.h"
#include "language/diagnostic.h"
#include "language/parser.h"

namespace backendbench::facto {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_specs("t.spec", text);
  } catch (const DiagnosticError& error) {
    return error.what();
  }
  return "";
}

TEST(FactoSpec, ReadsArgumentsAndAttributes) {
  const auto specs = parse_specs("t.spec",
                                 "# comment\n"
                                 "Operator: aten.add.Tensor\n"
                                 "  self: tensor dtypes=float,i64 rank=1..3 empty=no\n"
                                 "  other: tensor broadcast=self promote=f32\n"
                                 "  alpha: keyword values=1,-0.5\n");
  ASSERT_EQ(specs.size(), 1u);
  const OperatorSpec& add = specs[0];
  EXPECT_EQ(add.op, "aten.add.Tensor");
  ASSERT_EQ(add.arguments.size(), 3u);
  EXPECT_EQ(add.arguments[0].dtypes, (std::vector<std::string>{"f32", "f16", "bf16", "f64", "i64"}));
  EXPECT_EQ(add.arguments[0].rank_min, 1);
  EXPECT_EQ(add.arguments[0].rank_max, 3);
  EXPECT_FALSE(add.arguments[0].allow_empty);
  EXPECT_EQ(add.arguments[1].shape, ShapeRule::kBroadcast);
  EXPECT_EQ(add.arguments[1].of, "self");
  EXPECT_EQ(add.arguments[1].promotions, (std::vector<std::string>{"f32"}));
  EXPECT_TRUE(add.arguments[2].keyword);
  EXPECT_EQ(add.arguments[2].values, (std::vector<std::string>{"1", "-0.5"}));
  EXPECT_EQ(add.arguments[2].where.line, 5);
}

// One test per diagnostic: the message, its line and column.
TEST(FactoSpecDiagnostics, LineThatIsNotAnOperator) {
  EXPECT_EQ(error_of("Operatr: aten.relu.default\n"),
            "t.spec:1:1: error: expected an 'Operator:' line; expected 'Operator: aten.<name>.<overload>', then its "
            "arguments indented");
}
TEST(FactoSpecDiagnostics, MalformedOperatorName) {
  EXPECT_EQ(error_of("Operator: relu\n"),
            "t.spec:1:11: error: malformed operator name; expected aten.<name>.<overload>, e.g. aten.add.Tensor or "
            "aten.relu.default");
}
TEST(FactoSpecDiagnostics, OperatorTwice) {
  EXPECT_EQ(error_of("Operator: aten.relu.default\n  self: tensor dtypes=f32\nOperator: aten.relu.default\n"),
            "t.spec:3:11: error: aten.relu.default is specified twice; expected one entry per operator overload");
}
TEST(FactoSpecDiagnostics, ArgumentBeforeOperator) {
  EXPECT_EQ(error_of("  self: tensor dtypes=f32\n"),
            "t.spec:1:3: error: argument line before any operator; expected an 'Operator: aten.<name>.<overload>' line first");
}
TEST(FactoSpecDiagnostics, MalformedArgumentLine) {
  EXPECT_NE(error_of("Operator: aten.relu.default\n  self tensor\n").find("t.spec:2:3: error: malformed argument line"),
            std::string::npos);
}
TEST(FactoSpecDiagnostics, ArgumentTwice) {
  EXPECT_EQ(error_of("Operator: aten.relu.default\n  self: tensor dtypes=f32\n  self: tensor dtypes=f32\n"),
            "t.spec:3:3: error: argument 'self' is specified twice; expected one line per argument (first at line 2)");
}
TEST(FactoSpecDiagnostics, MissingKind) {
  EXPECT_EQ(error_of("Operator: aten.relu.default\n  self:\n"),
            "t.spec:2:8: error: argument 'self' has no kind; expected tensor, dim, dims, bool, values, dtype or none");
}
TEST(FactoSpecDiagnostics, UnknownKind) {
  EXPECT_EQ(error_of("Operator: aten.relu.default\n  self: tensr\n"),
            "t.spec:2:9: error: unknown argument kind 'tensr'; expected tensor, dim, dims, bool, values, dtype or none");
}
TEST(FactoSpecDiagnostics, AttributeOfAnotherKind) {
  EXPECT_NE(error_of("Operator: aten.relu.default\n  self: tensor of=x\n")
                .find("t.spec:2:16: error: 'of=x' is not an attribute of a tensor argument; expected dtypes="),
            std::string::npos);
}
TEST(FactoSpecDiagnostics, AttributeTwice) {
  EXPECT_EQ(error_of("Operator: aten.relu.default\n  self: tensor dtypes=f32 dtypes=f16\n"),
            "t.spec:2:27: error: 'dtypes' is given twice; expected each attribute, and one shape rule, once");
}
TEST(FactoSpecDiagnostics, UnknownDtype) {
  EXPECT_NE(error_of("Operator: aten.relu.default\n  self: tensor dtypes=f32,f8\n")
                .find("t.spec:2:23: error: unknown dtype 'f8'; expected abbreviations"),
            std::string::npos);
}
TEST(FactoSpecDiagnostics, MalformedRank) {
  EXPECT_EQ(error_of("Operator: aten.relu.default\n  self: tensor dtypes=f32 rank=1..x\n"),
            "t.spec:2:32: error: malformed rank '1..x'; expected a rank N or a range A..B");
}
TEST(FactoSpecDiagnostics, RankOutOfRange) {
  EXPECT_EQ(error_of("Operator: aten.relu.default\n  self: tensor dtypes=f32 rank=3..1\n"),
            "t.spec:2:32: error: rank '3..1' is out of range; expected ranks within 0..6, the smaller first");
}
TEST(FactoSpecDiagnostics, SettingThatIsNotNo) {
  EXPECT_EQ(error_of("Operator: aten.relu.default\n  self: tensor dtypes=f32 empty=yes\n"),
            "t.spec:2:33: error: 'empty=yes' is not a setting; expected empty=no");
}
TEST(FactoSpecDiagnostics, ReferenceToALaterOrMissingTensor) {
  EXPECT_EQ(error_of("Operator: aten.add.Tensor\n  self: tensor dtypes=f32 same=other\n"),
            "t.spec:2:32: error: 'other' is not an earlier tensor argument of aten.add.Tensor; expected the name of a "
            "tensor argument specified above this line");
}
TEST(FactoSpecDiagnostics, ValueThatIsNotAValue) {
  EXPECT_NE(error_of("Operator: aten.add.Tensor\n  self: tensor dtypes=f32\n  alpha: values=1,two\n")
                .find("t.spec:3:17: error: 'two' is not a value"),
            std::string::npos);
}
TEST(FactoSpecDiagnostics, DimWithoutTensor) {
  EXPECT_EQ(error_of("Operator: aten.sum.dim_IntList\n  self: tensor dtypes=f32\n  dim: dims\n"),
            "t.spec:3:3: error: dim argument 'dim' names no tensor; expected of=<an earlier tensor argument>");
}
TEST(FactoSpecDiagnostics, DtypeArgumentWithoutValues) {
  EXPECT_NE(error_of("Operator: aten._to_copy.default\n  self: tensor dtypes=f32\n  dtype: keyword dtype\n")
                .find("t.spec:3:3: error: argument 'dtype' lists no values"),
            std::string::npos);
}
TEST(FactoSpecDiagnostics, FreeTensorWithoutDtypes) {
  EXPECT_NE(error_of("Operator: aten.relu.default\n  self: tensor\n").find("t.spec:2:3: error: tensor 'self' lists no dtypes"),
            std::string::npos);
}
TEST(FactoSpecDiagnostics, PromotionOnAFreeTensor) {
  EXPECT_NE(error_of("Operator: aten.relu.default\n  self: tensor dtypes=f32 promote=f16\n")
                .find("t.spec:2:3: error: promote= on tensor 'self', whose shape follows no other"),
            std::string::npos);
}
TEST(FactoSpecDiagnostics, NumberThatIsNotANumber) {
  EXPECT_NE(error_of("Operator: aten.add.Tensor\n  self: tensor dtypes=f32\n  other: tensor broadcast=self number='x'\n")
                .find("t.spec:3:39: error: ''x'' is not a number; expected number=<a number"),
            std::string::npos);
}
TEST(FactoSpecDiagnostics, OperatorWithoutAFreeTensor) {
  EXPECT_NE(error_of("Operator: aten.relu.default\n").find("t.spec:1:11: error: aten.relu.default has no tensor argument"),
            std::string::npos);
}

OperatorSpec spec_of(const std::string& text) { return parse_specs("t.spec", text).at(0); }

std::set<std::string> probes_of(const std::vector<FactoCase>& cases) {
  std::set<std::string> probes;
  for (const FactoCase& item : cases) probes.insert(item.probe);
  return probes;
}

TEST(FactoExpand, BinaryOperatorMeetsEveryEdge) {
  const auto cases = expand(spec_of("Operator: aten.add.Tensor\n"
                                    "  self: tensor dtypes=f32,i64\n"
                                    "  other: tensor broadcast=self promote=f16 number=2.5\n"
                                    "  alpha: keyword values=1,2\n"),
                            100);
  std::map<std::string, std::string> by_probe;
  for (const FactoCase& item : cases) by_probe[item.probe] = item.arguments;
  EXPECT_EQ(by_probe["dtype f32"], "((T([3, 5], f32), T([3, 5], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["dtype i64"], "((T([3, 5], i64), T([3, 5], i64)), {'alpha': 1})");
  EXPECT_EQ(by_probe["self: size-0 dim (empty)"], "((T([0, 5], f32), T([0, 5], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["self: 0-dim"], "((T([], f32), T([], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["self: non-contiguous (transposed)"], "((T([3, 5], f32, stride=(1, 3)), T([3, 5], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["other: broadcast: fewer dims"], "((T([3, 5], f32), T([5], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["other: broadcast: size-1 dim 0"], "((T([3, 5], f32), T([1, 5], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["other: broadcast: 0-dim"], "((T([3, 5], f32), T([], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["other: broadcast: larger (the first operand broadcasts)"], "((T([3, 5], f32), T([4, 3, 5], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["other: dtype f16 (promotion)"], "((T([3, 5], f32), T([3, 5], f16)), {'alpha': 1})");
  EXPECT_EQ(by_probe["alpha = 2"], "((T([3, 5], f32), T([3, 5], f32)), {'alpha': 2})");
  EXPECT_EQ(by_probe["other: a Python number (2.5)"], "((T([3, 5], f32), 2.5), {'alpha': 1})");
  EXPECT_EQ(by_probe["self: expanded (zero stride)"], "((T([3, 5], f32, stride=(0, 1)), T([3, 5], f32)), {'alpha': 1})");
  EXPECT_EQ(by_probe["other: non-contiguous (transposed)"], "((T([3, 5], f32), T([3, 5], f32, stride=(1, 3))), {'alpha': 1})");
  EXPECT_EQ(by_probe["self: special values (nan, inf, -0.0, denormal) in f32"],
            "((T([3, 5], f32, values=[nan, inf, -inf, -0.0, 0.0, 1e-40, -1e-40, 1.5, -2.5, 3.4028234663852886e+38, nan, inf, "
            "-inf, -0.0, 0.0]), T([3, 5], f32)), {'alpha': 1})");
  // Every line is the trace language.
  for (const FactoCase& item : cases) {
    const auto parsed = parse::parse_trace("Operator: aten.add.Tensor\ncnt: 1, " + item.arguments + "\n", "x.txt");
    EXPECT_TRUE(parsed.errors.empty()) << item.arguments;
  }
}

TEST(FactoExpand, SettingsLeaveEdgesOut) {
  const auto cases = expand(spec_of("Operator: aten.add_.Tensor\n  self: tensor dtypes=i64,f16 expanded=no empty=no strided=no\n"
                                    "  other: tensor into=self\n"),
                            100);
  const std::set<std::string> probes = probes_of(cases);
  EXPECT_EQ(probes.count("self: expanded (zero stride)"), 0u);
  EXPECT_EQ(probes.count("self: size-0 dim (empty)"), 0u);
  EXPECT_EQ(probes.count("self: non-contiguous (transposed)"), 0u);
  EXPECT_EQ(probes.count("self: special values (nan, inf, -0.0, denormal) in f16"), 1u);  // its first floating dtype
}

TEST(FactoExpand, InPlaceOperandNeverOutgrowsSelf) {
  const auto cases = expand(spec_of("Operator: aten.add_.Tensor\n  self: tensor dtypes=f32\n  other: tensor into=self\n"), 100);
  EXPECT_EQ(probes_of(cases).count("other: broadcast: larger (the first operand broadcasts)"), 0u);
  EXPECT_EQ(probes_of(cases).count("other: broadcast: size-1 last dim"), 1u);
}

TEST(FactoExpand, DimsCoverNegativeDimsAndRanks) {
  const auto cases = expand(spec_of("Operator: aten.sum.dim_IntList\n  self: tensor dtypes=f32 rank=0..3\n"
                                    "  dim: dims of=self\n  keepdim: bool\n"),
                            100);
  const std::set<std::string> probes = probes_of(cases);
  for (const char* probe : {"dim -2", "dim -1", "dim 1", "dim [0, -1]", "keepdim = True", "self: 0-dim", "self: rank 3"}) {
    EXPECT_EQ(probes.count(probe), 1u) << probe;
  }
  EXPECT_EQ(probes.count("self: rank 4"), 0u);  // rank=0..3
}

TEST(FactoExpand, MatmulFollowsTheFirstOperand) {
  const auto cases = expand(spec_of("Operator: aten.mm.default\n  self: tensor dtypes=f32 rank=2\n  mat2: tensor matmul=self\n"), 100);
  std::map<std::string, std::string> by_probe;
  for (const FactoCase& item : cases) by_probe[item.probe] = item.arguments;
  EXPECT_EQ(by_probe["dtype f32"], "((T([3, 5], f32), T([5, 4], f32)), {})");
  EXPECT_EQ(by_probe["self: odd length past a vector width"], "((T([3, 1031], f32), T([1031, 4], f32)), {})");
  EXPECT_EQ(by_probe.count("self: rank 1"), 0u);
}

TEST(FactoExpand, BoundTakesFromEveryAxisAndIsDeterministic) {
  const OperatorSpec add = spec_of("Operator: aten.add.Tensor\n  self: tensor dtypes=all\n"
                                   "  other: tensor broadcast=self\n  alpha: keyword values=1,2,3\n");
  const auto few = expand(add, 4);
  ASSERT_EQ(few.size(), 4u);
  // The first round: the base case, then the first of the edges, of the ranks, of other's shapes.
  EXPECT_EQ(few[0].probe, "dtype f32");
  EXPECT_EQ(few[1].probe, "self: size-0 dim (empty)");
  EXPECT_EQ(few[2].probe, "self: 0-dim");
  EXPECT_EQ(few[3].probe, "other: broadcast: fewer dims");
  EXPECT_EQ(suite_text({add}, 10, {"a.spec"}), suite_text({add}, 10, {"a.spec"}));
  std::set<std::string> distinct;
  for (const FactoCase& item : expand(add, 1000)) EXPECT_TRUE(distinct.insert(item.arguments).second) << item.arguments;
}

TEST(FactoSchema, ReadsParameters) {
  const auto parameters = schema_parameters("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  ASSERT_EQ(parameters.size(), 4u);
  EXPECT_EQ(parameters[1].name, "dim");
  EXPECT_FALSE(parameters[1].has_default);
  EXPECT_TRUE(parameters[2].has_default);
  EXPECT_TRUE(parameters[3].keyword_only);
}

std::string schema_error(const std::string& text, const std::string& schema) {
  try {
    check_against_schema(spec_of(text), schema);
  } catch (const DiagnosticError& error) {
    return error.what();
  }
  return "";
}

const char* kAdd = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";

TEST(FactoSchema, AcceptsAFittingSpec) {
  EXPECT_EQ(schema_error("Operator: aten.add.Tensor\n  self: tensor dtypes=f32\n  other: tensor same=self\n"
                         "  alpha: keyword values=2\n",
                         kAdd),
            "");
}
TEST(FactoSchema, UnknownArgument) {
  EXPECT_EQ(schema_error("Operator: aten.add.Tensor\n  self: tensor dtypes=f32\n  exponent: tensor same=self\n", kAdd),
            std::string("t.spec:3:3: error: 'exponent' is not an argument of ") + kAdd + "; expected one of: self, other, alpha");
}
TEST(FactoSchema, KeywordOnlyWrittenPositionally) {
  EXPECT_EQ(schema_error("Operator: aten.add.Tensor\n  self: tensor dtypes=f32\n  other: tensor same=self\n  alpha: values=2\n", kAdd),
            std::string("t.spec:4:3: error: 'alpha' is keyword-only in ") + kAdd + "; expected 'alpha: keyword ...'");
}
TEST(FactoSchema, OutOfOrder) {
  EXPECT_NE(schema_error("Operator: aten.sum.dim_IntList\n  self: tensor dtypes=f32\n  dim: dims of=self\n"
                         "  dtype: keyword dtype values=f32\n  keepdim: keyword bool\n",
                         "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
                .find("t.spec:5:3: error: 'keepdim' is out of the schema's order"),
            std::string::npos);
}
TEST(FactoSchema, RequiredArgumentMissing) {
  EXPECT_EQ(schema_error("Operator: aten.add.Tensor\n  self: tensor dtypes=f32\n", kAdd),
            std::string("t.spec:1:11: error: 'other' has no default and is not specified; expected a line for every "
                        "argument of ") + kAdd + " without a default");
}
TEST(FactoSchema, PositionalAfterASkippedArgument) {
  EXPECT_NE(schema_error("Operator: aten.sum.dim_IntList\n  self: tensor dtypes=f32\n  dim: dims of=self\n"
                         "  dtype: dtype values=f32\n",
                         "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, ScalarType? dtype=None) -> Tensor")
                .find("t.spec:4:3: error: positional 'dtype' follows a skipped or keyword argument"),
            std::string::npos);
}

// The project's specifications: each reads without error and expands within the bound.
TEST(FactoSpecs, TheProjectsSpecsRead) {
  size_t operators = 0, files = 0, varied = 0;
  for (const auto& entry : std::filesystem::directory_iterator(BACKENDBENCH_FACTO_SPECS)) {
    if (entry.path().extension() != ".spec") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const OperatorSpec& spec : parse_specs(entry.path().string(), text.str())) {
      ++operators;
      const auto cases = expand(spec, 40);
      EXPECT_GE(cases.size(), 1u) << spec.op;
      EXPECT_LE(cases.size(), 40u) << spec.op;
      varied += cases.size() >= 5;
    }
  }
  EXPECT_GE(files, 5u);
  EXPECT_GE(operators, 160u);
  // Only the fixed-shape backward operators have fewer than 5 cases.
  EXPECT_GE(varied * 100, operators * 95) << varied << " of " << operators << " operators have 5 cases or more";
}

}  // namespace
}  // namespace backendbench::facto
