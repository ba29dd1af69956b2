// Suites from traces (de-duplication, filters, top-N, exclusions) and kernel discovery.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fake_schemas.h"
#include "model/model.h"
#include "language/diagnostic.h"
#include "language/parser.h"
#include "scratch_directory.h"

namespace backendbench::model {
namespace {
namespace fs = std::filesystem;

parse::TraceFile trace(const std::string& text, const std::string& path = "t.txt") {
  parse::ParseResult result = parse::parse_trace(text, path);
  EXPECT_TRUE(result.errors.empty());
  return result.trace;
}

const char* const kTrace =
    "Operator: aten.add.Tensor\n"
    "cnt: 2, ((T([2, 3], f16), T([2, 3], f16)), {})\n"
    "cnt: 5, ((T([64, 64], f16), T([64], f16)), {})\n"
    "cnt: 0, ((T([8], f32), T([8], f32)), {})\n"
    "Operator: aten.add.Scalar\n"
    "cnt: 1, ((T([4], f32), 2), {})\n"
    "Operator: aten.relu.default\n"
    "cnt: 1, ((T([10], f32),), {})\n"
    "Operator: aten.leaky_relu.default\n"
    "cnt: 1, ((T([10], f32), 0.2), {})\n"
    "Operator: aten.add.Tensor\n"
    "cnt: 3, ((T([2, 3], f16), T([2, 3], f16)), {})\n";

std::vector<std::string> operator_names(const Suite& suite) {
  std::vector<std::string> names;
  for (const auto& op : suite.operators) names.push_back(op.name.display());
  return names;
}

TEST(BuildSuite, DeduplicatesCasesAndSumsCounts) {
  const Suite suite = build_suite("s", {trace(kTrace)}, testing::FakeSchemaSource(), {}, {});
  ASSERT_EQ(operator_names(suite), (std::vector<std::string>{"add.Scalar", "add.Tensor", "leaky_relu.default", "relu.default"}));
  const Operator& add = suite.operators[1];
  ASSERT_EQ(add.cases.size(), 2u);  // the synthetic one is excluded by default
  EXPECT_EQ(add.cases[0].count, 5);  // 2 + 3
  EXPECT_EQ(add.cases[0].line, 2);  // first occurrence
  EXPECT_EQ(add.cases[1].input_elements, 64 * 64 + 64);
  EXPECT_NE(add.cases[0].seed, add.cases[1].seed);
  EXPECT_EQ(add.signature.declaration("add__Tensor_kernel_impl"),
            "at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)");
  ASSERT_EQ(suite.exclusions.size(), 1u);
  EXPECT_EQ(suite.exclusions[0].location, "t.txt:4");
  EXPECT_EQ(suite.exclusions[0].reason, "synthetic input (cnt: 0); include with BACKENDBENCH_INCLUDE_SYNTHETIC=ON (--include-synthetic)");
}

TEST(BuildSuite, SeedsDependOnContentOnly) {
  const Suite a = build_suite("a", {trace(kTrace, "x.txt")}, testing::FakeSchemaSource(), {}, {});
  const Suite b = build_suite("b", {trace(kTrace, "y.txt")}, testing::FakeSchemaSource(), {}, {});
  EXPECT_EQ(a.operators[1].cases[0].seed, b.operators[1].cases[0].seed);
  EXPECT_EQ(a.operators[1].cases[0].name, b.operators[1].cases[0].name);
}

TEST(BuildSuite, IncludesSyntheticOnRequest) {
  SuiteOptions options;
  options.include_synthetic = true;
  const Suite suite = build_suite("s", {trace(kTrace)}, testing::FakeSchemaSource(), options, {});
  EXPECT_EQ(suite.operators[1].cases.size(), 3u);
  EXPECT_TRUE(suite.operators[1].cases[2].synthetic);
  EXPECT_TRUE(suite.exclusions.empty());
}

TEST(BuildSuite, BaseNameFilterSelectsEveryOverloadOfExactlyThatBase) {
  SuiteOptions options;
  options.op_filters = {"add"};
  EXPECT_EQ(operator_names(build_suite("s", {trace(kTrace)}, testing::FakeSchemaSource(), options, {})),
            (std::vector<std::string>{"add.Scalar", "add.Tensor"}));
  options.op_filters = {"relu"};  // not leaky_relu
  EXPECT_EQ(operator_names(build_suite("s", {trace(kTrace)}, testing::FakeSchemaSource(), options, {})),
            (std::vector<std::string>{"relu.default"}));
}

TEST(BuildSuite, ExactOverloadFilter) {
  SuiteOptions options;
  options.op_filters = {"add.Tensor", "aten.relu.default"};
  EXPECT_EQ(operator_names(build_suite("s", {trace(kTrace)}, testing::FakeSchemaSource(), options, {})),
            (std::vector<std::string>{"add.Tensor", "relu.default"}));
}

TEST(BuildSuite, TopNKeepsTheLargestInputsInTraceOrder) {
  SuiteOptions options;
  options.top_n = 1;
  options.include_synthetic = true;
  const Suite suite = build_suite("s", {trace(kTrace)}, testing::FakeSchemaSource(), options, {});
  ASSERT_EQ(suite.operators[1].cases.size(), 1u);
  EXPECT_EQ(suite.operators[1].cases[0].arguments, "((T([64, 64], f16), T([64], f16)), {})");
}

TEST(BuildSuite, TopAndBottomNKeepTheLargestAndSmallest) {
  SuiteOptions options;
  options.top_n = 1;
  options.bottom_n = 1;
  options.include_synthetic = true;
  const Suite suite = build_suite("s", {trace(kTrace)}, testing::FakeSchemaSource(), options, {});
  ASSERT_EQ(suite.operators[1].cases.size(), 2u);
  EXPECT_EQ(suite.unselected, 1u + 0u);  // add.Tensor's synthetic input; the others have 1 input each
  // In trace order: the smallest (12 elements; the synthetic one has 16), then the largest.
  EXPECT_EQ(suite.operators[1].cases[0].arguments, "((T([2, 3], f16), T([2, 3], f16)), {})");
  EXPECT_EQ(suite.operators[1].cases[1].arguments, "((T([64, 64], f16), T([64], f16)), {})");
}

parse::TraceFile dataset(const std::string& text) {
  parse::ParseResult result = parse::parse_dataset_json(text, "d.json");
  EXPECT_TRUE(result.errors.empty());
  return result.trace;
}

const char* const kDataset = R"json([
  {"op_name": "aten.relu.default", "args": "((T([2], f16),), {})", "count": 3, "in_models": ["a", "b"],
   "is_overhead_dominated_op": true},
  {"op_name": "aten.relu.default", "args": "((T([64], f16),), {})", "count": 1, "in_models": ["b"]},
  {"op_name": "aten.relu.default", "args": "((T([8], f16),), {})", "included_in_benchmark": false,
   "why_excluded": ["Failed to run: x", "second reason"]},
  {"op_name": "aten.relu.default", "args": "((T([9], f16),), {})", "count": 0, "is_overhead_dominated_op": true}])json";

TEST(BuildSuite, HonoursTheDatasetsInclusionDecision) {
  const Suite suite = build_suite("s", {dataset(kDataset)}, testing::FakeSchemaSource(), {}, {});
  ASSERT_EQ(suite.operators.size(), 1u);
  ASSERT_EQ(suite.operators[0].cases.size(), 2u);
  EXPECT_EQ(suite.operators[0].cases[0].models, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(suite.exclusions.size(), 2u);
  EXPECT_EQ(suite.exclusions[0].reason, "excluded by the dataset (included_in_benchmark false): Failed to run: x; second reason");
  EXPECT_EQ(suite.exclusions[0].location, "d.json:5");  // the line the record starts on
  EXPECT_EQ(suite.exclusions[1].reason.rfind("synthetic input", 0), 0u);
}

TEST(BuildSuite, OverheadDominatedOnly) {
  SuiteOptions options;
  options.overhead_dominated_only = true;
  const Suite suite = build_suite("s", {dataset(kDataset)}, testing::FakeSchemaSource(), options, {});
  ASSERT_EQ(suite.operators[0].cases.size(), 1u);
  EXPECT_EQ(suite.operators[0].cases[0].arguments, "((T([2], f16),), {})");
  EXPECT_EQ(suite.unselected, 1u);  // the large one; the synthetic one is overhead-dominated but excluded as synthetic
  EXPECT_EQ(suite.exclusions.size(), 2u);
}

TEST(BuildSuite, TraceFilesNameTheModelsOfAnInput) {
  const Suite suite = build_suite(
      "s", {trace(kTrace, "traces/hf_train/Bert_training.txt"), trace(kTrace, "traces/timm_train/resnet_training.txt")},
      testing::FakeSchemaSource(), {}, {});
  EXPECT_EQ(suite.operators[3].cases[0].models, (std::vector<std::string>{"Bert_training", "resnet_training"}));
  EXPECT_EQ(suite.operators[3].cases[0].count, 2);
}

TEST(BuildSuite, SumSymIntIsAnAliasOfDimIntList) {
  const Suite suite = build_suite("s", {trace("Operator: aten.sum.SymInt\ncnt: 1, ((T([4, 4], f16), [0]), {})\n")},
                                  testing::FakeSchemaSource(), {}, {});
  EXPECT_EQ(operator_names(suite), (std::vector<std::string>{"sum.dim_IntList"}));
}

TEST(BuildSuite, UnknownOperatorIsAnErrorAtItsLine) {
  try {
    build_suite("s", {trace("Operator: aten.relu.default\ncnt: 1, ((T([2], f32),), {})\nOperator: aten.frobnicate.default\n")},
                testing::FakeSchemaSource(), {}, {});
    FAIL() << "expected a diagnostic";
  } catch (const DiagnosticError& error) {
    EXPECT_STREQ(error.what(), "t.txt:3:11: error: unknown operator 'aten.frobnicate.default'; expected an operator of the "
                               "installed libtorch, as in aten.add.Tensor");
  }
}

TEST(BuildSuite, UnknownOperatorCanBeExcludedWithAReason) {
  SuiteOptions options;
  options.exclude_unknown_operators = true;
  const Suite suite = build_suite("s", {trace("Operator: aten.frobnicate.default\ncnt: 1, ((T([2], f32),), {})\n")},
                                  testing::FakeSchemaSource(), options, {});
  EXPECT_TRUE(suite.operators.empty());
  ASSERT_EQ(suite.exclusions.size(), 1u);
  EXPECT_EQ(suite.exclusions[0].reason, "operator not in the installed libtorch");
}

TEST(BuildSuite, UnbindableSchemaIsExcludedWithAReason) {
  const Suite suite = build_suite("s", {trace("Operator: aten.align_to.default\ncnt: 1, ((T([2], f32), ['N']), {})\n")},
                                  testing::FakeSchemaSource(), {}, {});
  EXPECT_TRUE(suite.operators.empty());
  ASSERT_EQ(suite.exclusions.size(), 1u);
  EXPECT_EQ(suite.exclusions[0].reason,
            "schema not bindable: argument 'names' has type Dimname[], which the harness cannot bind");
}

TEST(TensorSummary, DescribesDtypesAndShapes) {
  EXPECT_EQ(tensor_summary(parse::parse_arguments("((T([2, 3], f16), [T([], f32), None], 1), {'w': T([0], i64)})")),
            "f16_2x3_f32_0d_i64_0");
  EXPECT_EQ(input_elements(parse::parse_arguments("((T([2, 3], f16), T([], f32)), {})")), 7);
}

// --- kernel discovery --------------------------------------------------------------------

class KernelDiscovery : public testing::ScratchDirectoryTest {
 protected:
  void SetUp() override {
    ScratchDirectoryTest::SetUp();
    fs::create_directories(root_);
  }
  void touch(const std::string& relative) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << "// kernel\n";
  }
  std::string discover_error() {
    try {
      discover_kernels(root_.string(), testing::FakeSchemaSource());
    } catch (const DiagnosticError& error) {
      return error.what();
    }
    return "no error";
  }
};

TEST_F(KernelDiscovery, FindsEveryImplementation) {
  touch("relu/relu_implementation_1.cpp");
  touch("relu/relu_implementation_2.cu");
  touch("relu/helpers.h");
  touch("add__Tensor/add__Tensor_implementation_1.cpp");
  touch("add___Tensor/add___Tensor_implementation_3.cpp");
  const auto kernels = discover_kernels(root_.string(), testing::FakeSchemaSource());
  ASSERT_EQ(kernels.size(), 4u);
  EXPECT_EQ(kernels[0].op.display(), "add.Tensor");
  EXPECT_EQ(kernels[0].function(), "add__Tensor_kernel_impl");
  EXPECT_EQ(kernels[1].op.display(), "add_.Tensor");
  EXPECT_EQ(kernels[1].name(), "impl3");
  EXPECT_EQ(kernels[2].function(), "relu_kernel_impl");
  EXPECT_FALSE(kernels[2].is_cuda);
  EXPECT_TRUE(kernels[3].is_cuda);
  EXPECT_EQ(kernels[3].binding_symbol(), "backendbench_kernel_relu__default_impl2");
}

TEST_F(KernelDiscovery, FindsWhichCudaKernelsHaveADevicePart) {
  touch("relu/relu_implementation_1.cu");
  std::ofstream(root_ / "relu" / "relu_implementation_2.cu") << "#ifdef BACKENDBENCH_DEVICE_PART\n__global__ void k() {}\n#endif\n";
  std::ofstream(root_ / "relu" / "relu_implementation_3.cpp") << "#ifdef BACKENDBENCH_DEVICE_PART\n#endif\n";
  const auto kernels = discover_kernels(root_.string(), testing::FakeSchemaSource());
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_FALSE(kernels[0].has_device_part);  // a classic .cu: nvcc compiles all of it
  EXPECT_TRUE(kernels[1].has_device_part);
  EXPECT_FALSE(kernels[2].has_device_part);  // only a .cu kernel has a device part
}

TEST_F(KernelDiscovery, ReadsTheExpectedFailureOfAFixture) {
  touch("relu/relu_implementation_1.cpp");
  fs::create_directories(root_ / "relu");
  std::ofstream(root_ / "relu/relu_implementation_2.cpp")
      << "// Wrong: identity.\n// expect-failure: values differ beyond\n#include <ATen/ATen.h>\n";
  const auto kernels = discover_kernels(root_.string(), testing::FakeSchemaSource());
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].expected_failure, "");
  EXPECT_EQ(kernels[1].expected_failure, "values differ beyond");
}

TEST(DeriveVariants, AFunctionalKernelServesItsInPlaceAndOutSiblings) {
  const KernelVariant add{OperatorName{"aten", "add", "Tensor"}, "add", 1, "k/add/add_implementation_1.cpp", false};
  const KernelVariant relu{OperatorName{"aten", "relu", "default"}, "relu", 1, "k/relu/relu_implementation_1.cpp", false};
  const KernelVariant add_scalar{OperatorName{"aten", "add", "Scalar"}, "add__Scalar", 1, "k/a.cpp", false};
  const auto derived = derive_variants({add, relu, add_scalar}, testing::FakeSchemaSource());
  ASSERT_EQ(derived.size(), 2u);  // the fakes have no relu_, add_.Scalar or add.Scalar_out
  EXPECT_EQ(derived[0].op.display(), "add_.Tensor");
  EXPECT_EQ(derived[1].op.display(), "add.out");
  EXPECT_EQ(derived[0].derived_from->display(), "add.Tensor");
  EXPECT_EQ(derived[0].path, add.path);
  EXPECT_EQ(derived[0].binding_symbol(), "backendbench_kernel_add___Tensor_impl1_from_add__Tensor");
}

TEST(DeriveVariants, AnOperatorWithItsOwnKernelDoesNotUseADerivedOne) {
  testing::FakeSchemaSource schemas;
  const KernelVariant add{OperatorName{"aten", "add", "Tensor"}, "add", 1, "k/add/add_implementation_1.cpp", false};
  const KernelVariant own{OperatorName{"aten", "add_", "Tensor"}, "add___Tensor", 2, "k/own.cpp", false};
  std::vector<KernelVariant> kernels = {add, own};
  for (const KernelVariant& variant : derive_variants(kernels, schemas)) kernels.push_back(variant);
  const parse::ParseResult parsed = parse::parse_trace(
      "Operator: aten.add_.Tensor\ncnt: 1, ((T([2], f32), T([2], f32)), {})\n"
      "Operator: aten.add.out\ncnt: 1, ((T([2], f32), T([2], f32)), {'out': T([2], f32)})\n", "t.txt");
  const Suite suite = build_suite("s", {parsed.trace}, schemas, {}, kernels);
  ASSERT_EQ(suite.operators.size(), 2u);
  const Operator& out = suite.operators[0].name.display() == "add.out" ? suite.operators[0] : suite.operators[1];
  const Operator& in_place = suite.operators[0].name.display() == "add.out" ? suite.operators[1] : suite.operators[0];
  ASSERT_EQ(in_place.variants.size(), 1u);
  EXPECT_FALSE(in_place.variants[0].derived_from.has_value());  // its own impl2
  ASSERT_EQ(out.variants.size(), 1u);
  EXPECT_EQ(out.variants[0].derived_from->display(), "add.Tensor");
}

TEST_F(KernelDiscovery, FindsPythonKernelsInTheOriginalsFormat) {
  touch("relu/relu_implementation_1.cpp");
  touch("relu/relu_implementation_v2.py");  // the original's LLM backend names them so
  fs::create_directories(root_ / "add__Tensor");
  std::ofstream(root_ / "add__Tensor" / "add__Tensor_implementation_1.py")
      << "# expect-failure: wrong sum\nimport torch\nimport triton\n";
  const std::vector<KernelVariant> kernels = discover_kernels(root_.string(), testing::FakeSchemaSource());
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].op.display(), "add.Tensor");
  EXPECT_TRUE(kernels[0].is_python);
  EXPECT_TRUE(kernels[0].is_cuda);  // it imports Triton
  EXPECT_FALSE(kernels[0].is_compiled());
  EXPECT_EQ(kernels[0].expected_failure, "wrong sum");
  EXPECT_TRUE(kernels[1].is_compiled());
  EXPECT_EQ(kernels[2].name(), "impl2");
  EXPECT_TRUE(kernels[2].is_python);
  EXPECT_FALSE(kernels[2].is_cuda);
  // A Python add.Tensor kernel serves add.Tensor alone (the original's rule): no add_.Tensor, no add.out.
  EXPECT_TRUE(derive_variants(kernels, testing::FakeSchemaSource()).empty());
}

TEST_F(KernelDiscovery, ReadsAnOpLibrarysListing) {
  std::ofstream(root_ / "flag_gems.txt") << "# op library flag_gems\n# device: cuda\n# unavailable: no GPU here\n"
                                         << "add.Tensor\nrelu\nfrobnicate.default\n";
  const OpLibrary library = read_op_library("flag_gems", (root_ / "flag_gems.txt").string(), testing::FakeSchemaSource());
  EXPECT_EQ(library.unavailable, "no GPU here");
  ASSERT_EQ(library.operators.size(), 2u);  // frobnicate is not an operator of this libtorch
  EXPECT_EQ(library.operators[1].op.display(), "relu.default");
  EXPECT_EQ(library.operators[1].name(), "flag_gems");
  EXPECT_TRUE(library.operators[1].is_cuda);
  EXPECT_FALSE(library.operators[1].is_compiled());
}

TEST_F(KernelDiscovery, AMalformedOpLibraryListingLine) {
  std::ofstream(root_ / "lib.txt") << "# device: cpu\nadd.Tensor\nrelu default\n";
  try {
    read_op_library("lib", (root_ / "lib.txt").string(), testing::FakeSchemaSource());
    FAIL() << "no error";
  } catch (const DiagnosticError& error) {
    EXPECT_EQ(std::string(error.what()), (root_ / "lib.txt").string() +
                                             ":3:1: error: 'relu default' is not an operator overload; expected one "
                                             "overload per line, such as add.Tensor");
  }
}

TEST_F(KernelDiscovery, FolderNamingNoOperator) {
  touch("frobnicate/frobnicate_implementation_1.cpp");
  EXPECT_EQ(discover_error(), (root_ / "frobnicate").string() +
                                  ": error: folder 'frobnicate' names no ATen operator (read as frobnicate.default); "
                                  "expected an overload with '.' written '__' (add__Tensor, relu__default) or a base "
                                  "name with a default overload (relu)");
}

TEST_F(KernelDiscovery, EmptyFolder) {
  touch("relu/README.md");
  EXPECT_EQ(discover_error(), (root_ / "relu").string() +
                                  ": error: no kernel file in the folder; expected relu_implementation_1.cpp (or .cu, or .py) "
                                  "defining at::Tensor relu_kernel_impl(const at::Tensor& self)");
}

TEST_F(KernelDiscovery, FileNameBreakingTheContract) {
  touch("relu/relu_v2.cpp");
  EXPECT_EQ(discover_error(), (root_ / "relu" / "relu_v2.cpp").string() +
                                  ": error: kernel file name does not follow the kernel contract; expected "
                                  "relu_implementation_1.cpp (any <N> from 1)");
}

TEST_F(KernelDiscovery, TwoFoldersForOneOperator) {
  touch("relu/relu_implementation_1.cpp");
  touch("relu__default/relu__default_implementation_1.cpp");
  EXPECT_EQ(discover_error(), (root_ / "relu__default").string() +
                                  ": error: folders 'relu' and 'relu__default' both name relu.default; expected one "
                                  "folder per operator");
}

TEST_F(KernelDiscovery, TwoFilesWithOneNumber) {
  touch("relu/relu_implementation_1.cpp");
  touch("relu/relu_implementation_1.cu");
  EXPECT_EQ(discover_error(), (root_ / "relu" / "relu_implementation_1.cpp").string() +
                                  ": error: 2 files are implementation 1: relu_implementation_1.cpp is a C++ file that "
                                  "does not define relu_kernel_impl, relu_implementation_1.cu is a CUDA file that does "
                                  "not define relu_kernel_impl; expected one file per implementation number: for "
                                  "BackendBench's pair of a .cpp declaration and its .cu definition, keep the .cu alone "
                                  "(remove the .cpp); else rename one to relu_implementation_2.cu");
}

TEST_F(KernelDiscovery, UnbindableOperator) {
  touch("align_to/align_to_implementation_1.cpp");
  EXPECT_EQ(discover_error(), (root_ / "align_to" / "align_to_implementation_1.cpp").string() +
                                  ": error: kernels for align_to.default cannot be bound: argument 'names' has type "
                                  "Dimname[], which the harness cannot bind; expected an operator whose argument and "
                                  "return types the harness supports (or a .py kernel)");
}

// --- every problem of a folder at once (what `backendbench run` finds before its build) -----

TEST_F(KernelDiscovery, EveryProblemOfAFolderIsFoundWithTheKernelsBesideIt) {
  const auto write = [&](const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  };
  write("relu/relu_implementation_1.cpp", "at::Tensor relu_kernel_impl(const at::Tensor& self) { return self; }\n");
  write("relu/relu_v2.cpp", "at::Tensor relu_kernel_impl(const at::Tensor& self) { return self; }\n");
  write("frobnicate/frobnicate_implementation_1.cpp", "");
  write("add__Tensor/add__Tensor_implementation_1.cpp",
        "at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);\n");
  write("add__Tensor/add__Tensor_implementation_1.cu",
        "at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) const\n{ return self; }\n");
  write("add__Tensor/add__Tensor_implementation_2.cpp", "// add__Tensor_kernel_impl is only named in this comment\n");
  write("relu__default/relu__default_implementation_1.py", "");  // in a folder left out: not read
  const FoundKernels found = find_kernels(root_.string(), testing::FakeSchemaSource(), /*check_contents=*/true);
  ASSERT_EQ(found.kernels.size(), 1u);  // the one kernel no problem concerns
  EXPECT_EQ(found.kernels[0].name(), "impl1");
  EXPECT_EQ(found.kernels[0].op.display(), "relu.default");
  std::vector<std::string> messages;
  for (const KernelProblem& problem : found.problems) messages.push_back(problem.diagnostic.str());
  ASSERT_EQ(found.problems.size(), 5u) << ::testing::PrintToString(messages);
  // Two files of one number: the layout of each, and a number to rename one to.
  EXPECT_EQ(messages[0], (root_ / "add__Tensor" / "add__Tensor_implementation_1.cpp").string() +
                             ": error: 2 files are implementation 1: add__Tensor_implementation_1.cpp is a declaration "
                             "of add__Tensor_kernel_impl (BackendBench's layout: its definition is in the .cu of the same "
                             "name), add__Tensor_implementation_1.cu is a CUDA kernel (this project's layout: the .cu "
                             "alone is the kernel); expected one file per implementation number: for BackendBench's pair "
                             "of a .cpp declaration and its .cu definition, keep the .cu alone (remove the .cpp); else "
                             "rename one to add__Tensor_implementation_3.cu");
  EXPECT_EQ(found.problems[0].op, "add.Tensor");
  EXPECT_EQ(found.problems[0].number, 1);
  EXPECT_EQ(found.problems[0].left_out.size(), 2u);
  // A name in a comment is no kernel.
  EXPECT_EQ(messages[1], (root_ / "add__Tensor" / "add__Tensor_implementation_2.cpp").string() +
                             ": error: the file holds no kernel: nothing in it is named add__Tensor_kernel_impl; expected "
                             "a definition of at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& "
                             "other, const at::Scalar& alpha)");
  EXPECT_EQ(found.problems[1].number, 2);
  // No operator: nothing near it among the fake schemas, so no hint; the folder is left out.
  EXPECT_EQ(messages[2], (root_ / "frobnicate").string() +
                             ": error: folder 'frobnicate' names no ATen operator (read as frobnicate.default); expected "
                             "an overload with '.' written '__' (add__Tensor, relu__default) or a base name with a "
                             "default overload (relu)");
  EXPECT_EQ(found.problems[2].op, "");
  EXPECT_EQ(found.problems[2].left_out, std::vector<std::string>{(root_ / "frobnicate").string()});
  EXPECT_EQ(messages[3], (root_ / "relu" / "relu_v2.cpp").string() +
                             ": error: kernel file name does not follow the kernel contract; expected relu_implementation_1.cpp "
                             "(any <N> from 1)");
  EXPECT_EQ(found.problems[3].number, 0);  // no number: no kernel's cases to fail
  EXPECT_EQ(messages[4], (root_ / "relu__default").string() +
                             ": error: folders 'relu' and 'relu__default' both name relu.default; expected one folder per operator");
}

TEST_F(KernelDiscovery, AFolderNamingNoOverloadIsToldTheOverloadsOfItsBaseName) {
  touch("add_/add__implementation_1.cpp");
  touch("rellu/rellu_implementation_1.cpp");
  const FoundKernels found = find_kernels(root_.string(), testing::FakeSchemaSource(), /*check_contents=*/false);
  ASSERT_EQ(found.problems.size(), 2u);
  EXPECT_NE(found.problems[0].diagnostic.expected.find("; the nearest: add___Tensor (add_.Tensor)"), std::string::npos)
      << found.problems[0].diagnostic.expected;
  EXPECT_NE(found.problems[1].diagnostic.expected.find("; the nearest: relu (relu.default)"), std::string::npos)
      << found.problems[1].diagnostic.expected;
}

TEST_F(KernelDiscovery, APythonKernelMayDefineItsFunctionByDefAssignmentOrImport) {
  const auto python = [&](int number, const std::string& text) {
    fs::create_directories(root_ / "relu");
    std::ofstream(root_ / "relu" / ("relu_implementation_" + std::to_string(number) + ".py")) << text;
  };
  python(1, "import torch\n\ndef relu_kernel_impl(x):\n    return x.clamp(min=0)\n");
  python(2, "relu_kernel_impl = torch.relu\n");
  python(3, "from helpers import relu_kernel_impl\n");
  python(4, "def relu(x):\n    relu_kernel_impl = 1\n    return x\n");  // only inside a function
  python(5, "if relu_kernel_impl == 2:\n    pass\n");                     // a comparison defines nothing
  const FoundKernels found = find_kernels(root_.string(), testing::FakeSchemaSource(), /*check_contents=*/true);
  ASSERT_EQ(found.kernels.size(), 3u);
  ASSERT_EQ(found.problems.size(), 2u);
  EXPECT_EQ(found.problems[0].number, 4);
  EXPECT_EQ(found.problems[1].number, 5);
}

TEST_F(KernelDiscovery, MissingDirectory) {
  fs::remove_all(root_);
  EXPECT_EQ(discover_error(), root_.string() + ": error: kernel directory not found; expected a folder with one sub-folder per operator");
}

TEST_F(KernelDiscovery, SuiteGetsTheVariantsOfItsOperators) {
  touch("relu/relu_implementation_1.cpp");
  const auto kernels = discover_kernels(root_.string(), testing::FakeSchemaSource());
  const Suite suite = build_suite("s", {trace(kTrace)}, testing::FakeSchemaSource(), {}, kernels);
  EXPECT_EQ(suite.operators[3].variants.size(), 1u);
  EXPECT_TRUE(suite.operators[1].variants.empty());
}

}  // namespace
}  // namespace backendbench::model

namespace backendbench::model {
namespace {

TEST(BuildSuite, RandomOperatorsAreExcludedWithAReason) {
  const Suite suite = build_suite("s", {trace("Operator: aten.bernoulli_.float\ncnt: 4, ((T([8], f16), 0.9), {})\n")},
                                  testing::FakeSchemaSource(), {}, {});
  EXPECT_TRUE(suite.operators.empty());
  ASSERT_EQ(suite.exclusions.size(), 1u);
  EXPECT_EQ(suite.exclusions[0].reason, "random operator: its output is random by design, so no reference can agree with it");
  EXPECT_FALSE(operator_exclusion(OperatorName{"aten", "relu", "default"}, Schema{}).has_value());
  Schema tagged;
  tagged.random_by_design = true;  // what TorchSchemaSource reads from the nondeterministic_seeded tag
  EXPECT_TRUE(operator_exclusion(OperatorName{"aten", "relu", "default"}, tagged).has_value());
  EXPECT_EQ(operator_exclusion(OperatorName{"aten", "_cudnn_rnn_backward", "default"}, Schema{}),
            "consumes the opaque reserve buffer of the _cudnn_rnn call it differentiates; a trace cannot supply a valid one");
}

}  // namespace
}  // namespace backendbench::model
