// Unit tests of settings.h: one table, one rule, one located error per bad value.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "backendbench/settings.h"

namespace backendbench {
namespace {

Settings parse(Frontend frontend, const std::map<std::string, std::string>& environment,
               std::vector<std::string> arguments = {}) {
  std::vector<char*> argv = {const_cast<char*>("exe")};
  for (std::string& argument : arguments) argv.push_back(argument.data());
  int argc = static_cast<int>(argv.size());
  return parse_settings(frontend, argc, argv.data(), [&](const char* name) -> const char* {
    auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  });
}

std::string error_of(Frontend frontend, const std::map<std::string, std::string>& environment,
                     std::vector<std::string> arguments = {}) {
  try {
    parse(frontend, environment, std::move(arguments));
  } catch (const SettingsError& error) {
    return error.what();
  }
  return "";
}

TEST(Settings, Defaults) {
  const Settings settings = parse(Frontend::kTests, {});
  EXPECT_EQ(settings.draws, 2);
  EXPECT_EQ(settings.case_timeout_seconds, 0);
  EXPECT_DOUBLE_EQ(settings.cpu_f16_gflop_limit, 2);
  EXPECT_FALSE(settings.salt_given);
  EXPECT_EQ(settings.layout.flush, SamplingLayout::Flush::kRead);
}

TEST(Settings, TheEnvironmentOverridesTheCommandLine) {
  EXPECT_EQ(parse(Frontend::kTests, {}, {"--case-timeout=30"}).case_timeout_seconds, 30);
  EXPECT_EQ(parse(Frontend::kTests, {{"BACKENDBENCH_CASE_TIMEOUT", "5"}}, {"--case-timeout=30"}).case_timeout_seconds, 5);
}

TEST(Settings, ABadValueIsOneLocatedError) {
  EXPECT_EQ(error_of(Frontend::kTests, {{"BACKENDBENCH_CASE_TIMEOUT", "abc"}}),
            "environment: BACKENDBENCH_CASE_TIMEOUT: error: 'abc' is not a valid value of BACKENDBENCH_CASE_TIMEOUT; "
            "expected a whole number of seconds, 0 for none");
  EXPECT_EQ(error_of(Frontend::kTests, {{"BACKENDBENCH_CPU_F16_GFLOP_LIMIT", "abc"}}),
            "environment: BACKENDBENCH_CPU_F16_GFLOP_LIMIT: error: 'abc' is not a valid value of "
            "BACKENDBENCH_CPU_F16_GFLOP_LIMIT; expected a number of GFLOP of at least 0 (0: no limit)");
  EXPECT_NE(error_of(Frontend::kTests, {{"BACKENDBENCH_DRAWS", "0"}}), "");
  EXPECT_NE(error_of(Frontend::kTests, {{"BACKENDBENCH_DRAWS", "2x"}}), "");
  EXPECT_NE(error_of(Frontend::kTests, {{"BACKENDBENCH_DEVICE", "tpu"}}), "");
  EXPECT_EQ(error_of(Frontend::kTests, {}, {"--case-timeout=-1"}),
            "command line: argument 1 (--case-timeout): error: '-1' is not a valid value of BACKENDBENCH_CASE_TIMEOUT; "
            "expected a whole number of seconds, 0 for none");
  EXPECT_EQ(error_of(Frontend::kBench, {{"BACKENDBENCH_FLUSH", "clean"}}),
            "environment: BACKENDBENCH_FLUSH: error: 'clean' is not a valid value of BACKENDBENCH_FLUSH; expected 'read' "
            "or 'write'");
}

TEST(Settings, AServedExecutableNamesAnAbsoluteKernelRoot) {
  EXPECT_EQ(parse(Frontend::kTests, {}, {"--backendbench_serve=/runs/a/attempts"}).serve_root, "/runs/a/attempts");
  EXPECT_EQ(parse(Frontend::kTests, {}).serve_root, "");
  EXPECT_EQ(error_of(Frontend::kTests, {}, {"--backendbench_serve=attempts"}),
            "command line: argument 1 (--backendbench_serve): error: 'attempts' is not a valid value of BACKENDBENCH_SERVE; "
            "expected an absolute folder path");
  // ./bench serves time jobs (the llm backends' timings); a relative root is wrong there too.
  EXPECT_EQ(parse(Frontend::kBench, {}, {"--backendbench_serve=/runs/a/attempts"}).serve_root, "/runs/a/attempts");
  EXPECT_NE(error_of(Frontend::kBench, {}, {"--backendbench_serve=attempts"}), "");
}

TEST(Settings, AnExecutableServingEntriesNamesItsSocket) {
  const Settings listening = parse(Frontend::kTests, {}, {"--backendbench_listen=backendbench-1-ab/backendbench_test_smoke/0/1"});
  EXPECT_EQ(listening.listen_address, "backendbench-1-ab/backendbench_test_smoke/0/1");
  EXPECT_TRUE(listening.serves());
  EXPECT_FALSE(parse(Frontend::kTests, {}).serves());
  const std::string too_long = error_of(Frontend::kTests, {}, {"--backendbench_listen=" + std::string(101, 'a')});
  EXPECT_EQ(too_long.rfind("command line: argument 1 (--backendbench_listen): error: 'aaaa", 0), 0u) << too_long;
  EXPECT_NE(too_long.find("' is not a valid value of BACKENDBENCH_LISTEN; expected an abstract Unix socket's name of 1 "
                          "to 100 characters"),
            std::string::npos)
      << too_long;
  EXPECT_NE(error_of(Frontend::kBench, {}, {"--backendbench_listen=a"}), "");
}

TEST(Settings, EarlySparesAreAutoOnOrOff) {
  EXPECT_EQ(parse(Frontend::kTests, {}).early_spare, std::nullopt);
  EXPECT_EQ(parse(Frontend::kTests, {{"BACKENDBENCH_EARLY_SPARE", "on"}}).early_spare, std::optional<bool>(true));
  EXPECT_EQ(parse(Frontend::kTests, {}, {"--backendbench_early_spare=off"}).early_spare, std::optional<bool>(false));
  EXPECT_EQ(parse(Frontend::kTests, {}, {"--backendbench_early_spare=auto"}).early_spare, std::nullopt);
  // The user's environment wins over a flag, as for every setting.
  EXPECT_EQ(parse(Frontend::kTests, {{"BACKENDBENCH_EARLY_SPARE", "on"}}, {"--backendbench_early_spare=off"}).early_spare,
            std::optional<bool>(true));
  EXPECT_EQ(error_of(Frontend::kTests, {{"BACKENDBENCH_EARLY_SPARE", "yes"}}),
            "environment: BACKENDBENCH_EARLY_SPARE: error: 'yes' is not a valid value of BACKENDBENCH_EARLY_SPARE; "
            "expected 'auto', 'on' or 'off'");
}

TEST(Settings, AFirstSpareIsCppOrPython) {
  EXPECT_FALSE(parse(Frontend::kTests, {}).first_spare_python);
  EXPECT_TRUE(parse(Frontend::kTests, {}, {"--backendbench_first_spare=python"}).first_spare_python);
  EXPECT_FALSE(parse(Frontend::kTests, {{"BACKENDBENCH_FIRST_SPARE", "cpp"}}, {"--backendbench_first_spare=python"}).first_spare_python);
  EXPECT_EQ(error_of(Frontend::kTests, {}, {"--backendbench_first_spare=triton"}),
            "command line: argument 1 (--backendbench_first_spare): error: 'triton' is not a valid value of "
            "BACKENDBENCH_FIRST_SPARE; expected 'cpp' or 'python'");
  EXPECT_TRUE(parse(Frontend::kBench, {}, {"--backendbench_first_spare=python"}).first_spare_python);
}

TEST(Settings, EachExecutableReadsOnlyItsOwn) {
  // ./bench's layout means nothing to the tests: not read there, and a flag of it is an error.
  EXPECT_EQ(error_of(Frontend::kTests, {{"BACKENDBENCH_FLUSH", "clean"}}), "");
  EXPECT_NE(error_of(Frontend::kTests, {}, {"--backendbench_flush=read"}), "");
  EXPECT_NE(settings_help(Frontend::kBench).find("BACKENDBENCH_FLUSH_MIB"), std::string::npos);
  EXPECT_EQ(settings_help(Frontend::kTests).find("BACKENDBENCH_FLUSH_MIB"), std::string::npos);
}

// docs/settings.md holds the table between two markers; BACKENDBENCH_UPDATE_GOLDEN=1 rewrites it.
TEST(Settings, TheReferenceInTheDocsIsTheTable) {
  const std::string path = std::string(BACKENDBENCH_TEST_SOURCE_DIR) + "/docs/settings.md";
  const std::string begin = "<!-- @generated from build_tests/runtime/src/settings.cpp (settings_reference_markdown) -->\n";
  const std::string end = "<!-- end of the generated reference -->\n";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  std::string document = text.str();
  const size_t from = document.find(begin), to = document.find(end);
  ASSERT_NE(from, std::string::npos) << path << ": no line '" << begin << "'";
  ASSERT_NE(to, std::string::npos) << path << ": no line '" << end << "'";
  ASSERT_LT(from, to);
  const std::string expected = settings_reference_markdown();
  const std::string found = document.substr(from + begin.size(), to - from - begin.size());
  if (found != expected && std::getenv("BACKENDBENCH_UPDATE_GOLDEN")) {
    document.replace(from + begin.size(), found.size(), expected);
    std::ofstream(path) << document;
    return;
  }
  EXPECT_EQ(found, expected) << path << " differs from the settings table: run this test with BACKENDBENCH_UPDATE_GOLDEN=1";
  // Each setting appears once, with its flag where it has one.
  EXPECT_NE(expected.find("| `BACKENDBENCH_DRAWS` (`--backendbench_draws`) | tests, bench | an integer of at least 1 |"),
            std::string::npos);
}

TEST(Settings, SamplingLayoutNamedThenFields) {
  const Settings copied = parse(Frontend::kBench, {{"BACKENDBENCH_LAYOUT", "do_bench"}});
  EXPECT_EQ(copied.layout.flush, SamplingLayout::Flush::kWrite);
  EXPECT_EQ(copied.layout.flush_bytes, int64_t{256} << 20);
  EXPECT_EQ(copied.layout.batch_pairs, 64);
  const Settings mixed = parse(Frontend::kBench, {{"BACKENDBENCH_LAYOUT", "do_bench"}, {"BACKENDBENCH_BATCH_PAIRS", "8"},
                                                 {"BACKENDBENCH_FLUSH", "read"}});
  EXPECT_EQ(mixed.layout.batch_pairs, 8);
  EXPECT_EQ(mixed.layout.flush, SamplingLayout::Flush::kRead);
  EXPECT_EQ(mixed.layout.flush_bytes, int64_t{256} << 20);
}

TEST(Settings, TheSaltIsRandomUnlessGivenAndRoundTrips) {
  const Settings a = parse(Frontend::kTests, {}), b = parse(Frontend::kTests, {});
  EXPECT_NE(a.salt, b.salt);
  const Settings given = parse(Frontend::kTests, {{"BACKENDBENCH_SALT", salt_text(a.salt)}});
  EXPECT_TRUE(given.salt_given);
  EXPECT_EQ(given.salt, a.salt);
  EXPECT_EQ(parse(Frontend::kTests, {{"BACKENDBENCH_SALT", "42"}}).salt, 42u);
  EXPECT_NE(error_of(Frontend::kTests, {{"BACKENDBENCH_SALT", "0xzz"}}), "");
}

TEST(Settings, FlagsAreRemovedFromTheCommandLine) {
  std::vector<std::string> arguments = {"exe", "--gtest_filter=x", "--case-timeout=3", "--backendbench_draws=4"};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  int argc = static_cast<int>(argv.size());
  const Settings settings = parse_settings(Frontend::kTests, argc, argv.data(), [](const char*) { return nullptr; });
  EXPECT_EQ(argc, 2);
  EXPECT_STREQ(argv[1], "--gtest_filter=x");
  EXPECT_EQ(settings.draws, 4);
}

}  // namespace
}  // namespace backendbench
