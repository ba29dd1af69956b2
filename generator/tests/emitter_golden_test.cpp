// Golden test of generated output: a small suite and one kernel binding rendered through the
// real templates/, compared with generator/tests/golden/. To accept a deliberate change, run
// the test with BACKENDBENCH_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emit/emitter.h"
#include "fake_schemas.h"
#include "language/parser.h"

namespace backendbench::emit {
namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::stringstream buffer;
  buffer << stream.rdbuf();
  return buffer.str();
}

void expect_matches_golden(const fs::path& generated, const std::string& golden_name) {
  const fs::path golden = fs::path(BACKENDBENCH_GOLDEN_DIR) / golden_name;
  if (std::getenv("BACKENDBENCH_UPDATE_GOLDEN")) {
    fs::copy_file(generated, golden, fs::copy_options::overwrite_existing);
    return;
  }
  EXPECT_EQ(read(generated), read(golden)) << "generated " << generated << " differs from " << golden;
}

TEST(Emitter, MatchesGoldenFiles) {
  const fs::path root = fs::temp_directory_path() / ("bb_golden_" + std::to_string(::getpid()));
  fs::remove_all(root);
  testing::FakeSchemaSource schemas;
  const parse::ParseResult parsed = parse::parse_trace(
      "Operator: aten.relu.default\ncnt: 1, ((T([2], f32),), {})\ncnt: 1, ((T([4, 4], f16, stride=(1, 4)),), {})\n"
      "Operator: aten.add.Tensor\ncnt: 3, ((T([2, 3], f16), 1.0), {'alpha': 2})\ncnt: 0, ((T([5], f16), \"a\\\"b\"), {})\n",
      "traces/example.txt");
  ASSERT_TRUE(parsed.errors.empty());
  const model::KernelVariant relu_kernel{model::OperatorName{"aten", "relu", "default"}, "relu", 1,
                                         "generated_kernels/relu/relu_implementation_1.cpp", false};
  // A fixture that must fail: its entry runs the test through the expect script.
  model::KernelVariant add_fixture{model::OperatorName{"aten", "add", "Tensor"}, "add", 1,
                                   "gallery/add/add_implementation_1.cpp", false};
  add_fixture.expected_failure = "'alpha': 2.*values differ";
  const model::Suite suite = model::build_suite("example", {parsed.trace}, schemas, {}, {relu_kernel, add_fixture});
  const Emitter emitter(BACKENDBENCH_TEMPLATES_DIR);

  OutputWriter suite_writer((root / "example").string());
  SuiteOutputOptions options;
  options.shards = 2;
  options.test_executable = "build/backendbench_test_example";
  options.results_directory = "build/results";
  options.case_timeout_seconds = 30;
  options.cases_per_entry = 1;  // relu's two cases become two parts; add's one stays one entry
  options.test_labels = "system";  // every entry's tier, after its own labels
  options.cmake_command = "/usr/bin/cmake";
  options.expect_script = "cmake/ExpectCommand.cmake";
  emitter.emit_suite(suite, options, suite_writer);
  EXPECT_EQ(suite_writer.outputs(),
            (std::vector<std::string>{"cases_0.cpp", "cases_1.cpp", "excluded.csv", "suite.json", "ctest.cmake"}));
  for (const std::string& file : suite_writer.outputs()) expect_matches_golden(root / "example" / file, "example_" + file);


  OutputWriter kernel_writer((root / "kernels").string());
  emitter.emit_kernel_binding(relu_kernel, *schemas.find(relu_kernel.op), {}, kernel_writer);
  ASSERT_EQ(kernel_writer.outputs(), (std::vector<std::string>{"relu/relu_implementation_1.binding.cpp"}));
  expect_matches_golden(root / "kernels/relu/relu_implementation_1.binding.cpp", "relu_implementation_1.binding.cpp");

  // A two-part .cu kernel: a C++ binding (its host part) and a CUDA device part of its own.
  model::KernelVariant two_part{model::OperatorName{"aten", "relu", "default"}, "relu", 3,
                                "generated_kernels/relu/relu_implementation_3.cu", true};
  two_part.has_device_part = true;
  emitter.emit_kernel_binding(two_part, *schemas.find(two_part.op), {}, kernel_writer);
  EXPECT_EQ(Emitter::kernel_binding_file(two_part), "relu/relu_implementation_3.binding.cpp");
  expect_matches_golden(root / "kernels/relu/relu_implementation_3.device.cu", "relu_implementation_3.device.cu");
  model::KernelVariant classic = two_part;
  classic.has_device_part = false;
  EXPECT_EQ(Emitter::kernel_binding_file(classic), "relu/relu_implementation_3.binding.cu");

  // A functional kernel's binding also serves its in-place and out= siblings.
  const model::KernelVariant add_kernel{model::OperatorName{"aten", "add", "Tensor"}, "add", 2,
                                        "generated_kernels/add/add_implementation_2.cpp", false};
  std::vector<std::pair<model::KernelVariant, model::Schema>> served;
  for (const model::KernelVariant& variant : model::derive_variants({add_kernel}, schemas)) {
    served.push_back({variant, *schemas.find(variant.op)});
  }
  ASSERT_EQ(served.size(), 2u);
  emitter.emit_kernel_binding(add_kernel, *schemas.find(add_kernel.op), served, kernel_writer);
  expect_matches_golden(root / "kernels/add/add_implementation_2.binding.cpp", "add_implementation_2.binding.cpp");

  // A candidate's binding in two parts: its own translation unit (the kernel, its signature
  // check, the function the binding calls) and a binding that names no candidate, the same text
  // for another candidate file and number of the operator, so its object can be kept.
  OutputWriter candidate_writer((root / "candidates").string());
  emitter.emit_candidate_binding(add_kernel, *schemas.find(add_kernel.op), served, candidate_writer);
  ASSERT_EQ(candidate_writer.outputs(), (std::vector<std::string>{"add/add_implementation_2.binding.cpp",
                                                                  "add/add_implementation_2.kernel.cpp"}));
  expect_matches_golden(root / "candidates/add/add_implementation_2.binding.cpp", "add_implementation_2.candidate_binding.cpp");
  expect_matches_golden(root / "candidates/add/add_implementation_2.kernel.cpp", "add_implementation_2.kernel.cpp");
  model::KernelVariant other_candidate = add_kernel;
  other_candidate.number = 5;
  other_candidate.path = "attempts/w2_r5/kernel/add/add_implementation_5.cpp";
  std::vector<std::pair<model::KernelVariant, model::Schema>> other_served;
  for (const model::KernelVariant& variant : model::derive_variants({other_candidate}, schemas)) {
    other_served.push_back({variant, *schemas.find(variant.op)});
  }
  OutputWriter other_writer((root / "other").string());
  emitter.emit_candidate_binding(other_candidate, *schemas.find(other_candidate.op), other_served, other_writer);
  EXPECT_EQ(read(root / "other/add/add_implementation_5.binding.cpp"), read(root / "candidates/add/add_implementation_2.binding.cpp"));
  EXPECT_NE(read(root / "other/add/add_implementation_5.kernel.cpp"), read(root / "candidates/add/add_implementation_2.kernel.cpp"));

  // The one library's index lists each kernel's entries symbol.
  emitter.emit_kernel_index("generated_kernels", {relu_kernel, add_kernel}, kernel_writer);
  expect_matches_golden(root / "kernels/kernel_index.cpp", "kernel_index.cpp");

  // Deterministic: a second run writes nothing.
  OutputWriter again((root / "example").string());
  emitter.emit_suite(suite, options, again);
  EXPECT_EQ(again.changed(), 0);

  // Kernels reach the CTest entries only: the same suite without its kernels has the same case
  // tables, so adding or removing a kernel recompiles no case table.
  OutputWriter without_kernels((root / "example").string());
  emitter.emit_suite(model::build_suite("example", {parsed.trace}, schemas, {}, {}), options, without_kernels);
  EXPECT_EQ(without_kernels.changed(), 2);  // ctest.cmake and suite.json, which list each entry's backends
  fs::remove_all(root);
}

TEST(Emitter, StringLiteralsEscape) {
  EXPECT_EQ(cpp_string_literal("a\"b\\c\nd"), "\"a\\\"b\\\\c\\012d\"");
  EXPECT_EQ(cpp_string_literal(std::string("cr\r, nul\0, \xc3\xa9", 13)), R"("cr\015, nul\000, \303\251")");
}

TEST(Emitter, CMakeArgumentsHoldAnyText) {
  EXPECT_EQ(cmake_argument("a b;c"), "[=[a b;c]=]");
  EXPECT_EQ(cmake_argument("ends ]=] and ]==]"), "[===[ends ]=] and ]==]]===]");
  EXPECT_EQ(cmake_argument("]="), "[==[]=]==]");  // found by fuzz_escaping: "[=[]=]=]" closes early
  EXPECT_EQ(cmake_argument("\nfirst line break kept"), "[=[\n\nfirst line break kept]=]");
  EXPECT_THROW(cmake_argument(std::string("nul\0", 4)), std::invalid_argument);
}

TEST(Emitter, CommentsStayOnTheirLine) {
  EXPECT_EQ(comment_text("traces/a\nb\\.txt"), "traces/a\\x0ab\\x5c.txt");
}

}  // namespace
}  // namespace backendbench::emit
