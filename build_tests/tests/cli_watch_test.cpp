// Unit tests of `backendbench watch`: cli/watch.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "cli/watch.h"
#include "cli_test_support.h"

namespace backendbench::cli {
namespace {

using namespace test;

TEST(Watch, KernelFilesAreSourcesAndHeadersNotAnEditorsFiles) {
  for (const char* name : {"relu_implementation_1.cpp", "relu_implementation_2.cu", "helpers.h", "tile.cuh", "x.hpp",
                           "relu_implementation_4.py"}) {
    EXPECT_TRUE(is_kernel_file(name)) << name;
  }
  for (const char* name : {".relu_implementation_1.cpp.swp", "relu_implementation_1.cpp~", "#relu_implementation_1.cpp#",
                           "4913", "notes.txt", "relu_implementation_1.cpp.tmp"}) {
    EXPECT_FALSE(is_kernel_file(name)) << name;
  }
}

TEST(Watch, ChangedFoldersMapToTheSelectionsOperators) {
  EXPECT_EQ(operators_to_rerun({"relu", "add"}, {}), (std::vector<std::string>{"add.Tensor", "relu.default"}));
  EXPECT_EQ(operators_to_rerun({"relu", "add"}, {"relu"}), (std::vector<std::string>{"relu.default"}));
  EXPECT_EQ(operators_to_rerun({"add"}, {"add.Tensor"}), (std::vector<std::string>{"add.Tensor"}));
  EXPECT_EQ(operators_to_rerun({"add__Scalar"}, {"add.Tensor"}), std::vector<std::string>{});
  EXPECT_EQ(operators_to_rerun({"leaky_relu"}, {"relu"}), std::vector<std::string>{});
  EXPECT_EQ(operators_to_rerun({"not an operator!"}, {}), std::vector<std::string>{});
}

// A real inotify watch on a scratch folder: saves are seen per operator folder, a new folder is
// watched from its creation, an editor's swap file is not a change.
TEST(Watch, SeesSavesInOperatorFoldersAndNewOnes) {
  Scratch scratch;
  scratch.write("kernels/relu/relu_implementation_1.cpp", "// v1\n");
  KernelFolderWatch watch(scratch.path() + "/kernels");
  using std::chrono::milliseconds;
  EXPECT_TRUE(watch.wait(milliseconds(300), milliseconds(50)).empty()) << "nothing was saved yet";
  scratch.write("kernels/relu/.relu_implementation_1.cpp.swp", "swap");
  EXPECT_TRUE(watch.wait(milliseconds(300), milliseconds(50)).empty()) << "a swap file is not a save";
  scratch.write("kernels/relu/relu_implementation_1.cpp", "// v2\n");
  EXPECT_EQ(watch.wait(milliseconds(2000), milliseconds(50)), (std::set<std::string>{"relu"}));
  // An editor that saves by renaming a new file over the old one.
  scratch.write("kernels/relu/relu_implementation_1.cpp.new", "// v3\n");
  std::rename((scratch.path() + "/kernels/relu/relu_implementation_1.cpp.new").c_str(),
              (scratch.path() + "/kernels/relu/relu_implementation_1.cpp").c_str());
  EXPECT_EQ(watch.wait(milliseconds(2000), milliseconds(50)), (std::set<std::string>{"relu"}));
  // A new operator folder, then a kernel saved in it.
  files::make_directories(scratch.path() + "/kernels/add");
  (void)watch.wait(milliseconds(300), milliseconds(50));
  scratch.write("kernels/add/add_implementation_1.cpp", "// add\n");
  EXPECT_EQ(watch.wait(milliseconds(2000), milliseconds(50)), (std::set<std::string>{"add"}));
  EXPECT_EQ(watch.touched_files(), (std::set<std::string>{"add/add_implementation_1.cpp"}));
  // The files of one save: the kernel and a header, not the swap file beside them.
  scratch.write("kernels/relu/relu_implementation_1.cpp", "// v4\n");
  scratch.write("kernels/relu/helpers.h", "// h\n");
  scratch.write("kernels/relu/.relu_implementation_1.cpp.swp", "swap");
  EXPECT_EQ(watch.wait(milliseconds(2000), milliseconds(50)), (std::set<std::string>{"relu"}));
  EXPECT_EQ(watch.touched_files(), (std::set<std::string>{"relu/helpers.h", "relu/relu_implementation_1.cpp"}));
  volatile bool stop = true;
  scratch.write("kernels/relu/relu_implementation_1.cpp", "// v5\n");
  EXPECT_TRUE(watch.wait(milliseconds(2000), milliseconds(50), &stop).empty()) << "a stop request ends the wait";
}

// Which saved files get a quick verdict: kernel files of the selection that a candidate slot can
// build alone, with the headers they include by quotes written beside them; the rest wait for
// the full run.
TEST(Watch, QuickChecksAreTheSavedKernelsASlotCanBuildAlone) {
  Scratch scratch;
  scratch.write("kernels/elementwise.h", "// root\n");
  scratch.write("kernels/relu/relu_implementation_1.cpp", "#include <ATen/ATen.h>\n");
  scratch.write("kernels/relu/relu_implementation_2.cu", "#include <ATen/ATen.h>\n");
  scratch.write("kernels/relu/relu_implementation_3.py", "import torch\n");
  scratch.write("kernels/relu/relu_implementation_4.cpp", "#include <ATen/ATen.h>\n  #  include \"../elementwise.h\"\n");
  scratch.write("kernels/relu/relu_implementation_6.cpp", "#include \"missing.h\"\n");
  scratch.write("kernels/relu/relu_implementation_7.cpp", "#include \"sub/elementwise.h\"\n");
  scratch.write("kernels/relu/helpers.h", "// h\n");
  scratch.write("kernels/relu/notes.cpp", "// not a kernel\n");
  scratch.write("kernels/add/add_implementation_1.cpp", "#include \"elementwise.h\"\n#include \"helpers.h\"\n");
  scratch.write("kernels/add/helpers.h", "// add's\n");
  // Links lead out of the kernel folder, where the folder's sandboxed build cannot follow them: a
  // linked header is not copied (so a kernel including it waits for the full run), nor a linked kernel read.
  scratch.write("outside/key.txt", "sk-planted\n");
  ASSERT_EQ(symlink((scratch.path() + "/outside/key.txt").c_str(), (scratch.path() + "/kernels/relu/key.h").c_str()), 0);
  scratch.write("kernels/relu/relu_implementation_8.cpp", "#include \"key.h\"\n");
  ASSERT_EQ(symlink((scratch.path() + "/outside/key.txt").c_str(),
                    (scratch.path() + "/kernels/relu/relu_implementation_9.cpp").c_str()), 0);
  const std::string root = scratch.path() + "/kernels";
  const std::set<std::string> touched = {"relu/relu_implementation_1.cpp", "relu/relu_implementation_2.cu",
                                         "relu/relu_implementation_3.py", "relu/relu_implementation_4.cpp",
                                         "relu/relu_implementation_5.cpp" /* removed */, "relu/relu_implementation_6.cpp",
                                         "relu/relu_implementation_7.cpp", "relu/relu_implementation_8.cpp",
                                         "relu/relu_implementation_9.cpp", "relu/helpers.h", "relu/notes.cpp",
                                         "add/add_implementation_1.cpp"};
  const auto files_of = [](const std::vector<QuickCheck>& checks) {
    std::vector<std::string> files;
    for (const QuickCheck& check : checks) files.push_back(check.file);
    return files;
  };
  const std::vector<QuickCheck> plain = quick_checks(root, touched, {"relu"}, /*cuda=*/false, /*python=*/false);
  EXPECT_EQ(files_of(plain), (std::vector<std::string>{"relu/relu_implementation_1.cpp", "relu/relu_implementation_4.cpp"}));
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].op, "relu.default");
  EXPECT_EQ(plain[0].path, root + "/relu/relu_implementation_1.cpp");
  EXPECT_EQ(plain[0].language, agents::KernelLanguage::kCpp);
  EXPECT_TRUE(plain[0].beside.empty()) << "no quoted include, nothing beside";
  EXPECT_EQ(plain[1].beside, (std::map<std::string, std::string>{{"elementwise.h", "// root\n"},
                                                                 {"relu/elementwise.h", "// root\n"},
                                                                 {"relu/helpers.h", "// h\n"}}));
  EXPECT_EQ(plain[1].beside.count("relu/key.h"), 0u) << "a linked header is not copied";
  const std::vector<QuickCheck> every = quick_checks(root, touched, {}, /*cuda=*/true, /*python=*/true);
  EXPECT_EQ(files_of(every), (std::vector<std::string>{"add/add_implementation_1.cpp", "relu/relu_implementation_1.cpp",
                                                       "relu/relu_implementation_2.cu", "relu/relu_implementation_3.py",
                                                       "relu/relu_implementation_4.cpp"}));
  ASSERT_EQ(every.size(), 5u);
  EXPECT_EQ(every[0].op, "add.Tensor");
  // Its own folder's helpers.h, not relu's; the root's header in both places.
  EXPECT_EQ(every[0].beside, (std::map<std::string, std::string>{{"elementwise.h", "// root\n"},
                                                                 {"add/elementwise.h", "// root\n"},
                                                                 {"add/helpers.h", "// add's\n"}}));
  EXPECT_EQ(every[2].language, agents::KernelLanguage::kCuda);
  EXPECT_EQ(every[3].language, agents::KernelLanguage::kPython);
}

TEST(Watch, AQuickVerdictSaysWhatTheRewardFound) {
  const QuickCheck check{"relu.default", agents::KernelLanguage::kCpp, "relu/relu_implementation_1.cpp", "/k/relu/relu_implementation_1.cpp"};
  agents::Reward reward;
  reward.outcome = "passed";
  reward.passed = 9;
  reward.skipped = 2;
  reward.seconds = 1.5;
  reward.build_seconds = 1.25;
  reward.check_seconds = 0.2;
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: correct on 9 cases (2 skipped) (1.50 s: build 1.25 s, check 0.20 s)");
  reward.outcome = "failed";
  reward.passed = 8;
  reward.failed = 1;
  reward.failed_case = "smoke/f32_2_ad7ca611";
  reward.reason = "outputs: output 0: 1 of 2 values differ";
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: WRONG on 1 of 11 cases (1.50 s: build 1.25 s, check 0.20 s)\n"
            "  first: smoke/f32_2_ad7ca611\n  outputs: output 0: 1 of 2 values differ");
  reward.failed = 0;
  reward.reason = "no case ran (every case skipped)";
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: no verdict: no case ran (every case skipped) (1.50 s: build 1.25 s, check 0.20 s)");
  reward.outcome = "build_failed";
  reward.build_errors = {"relu/relu_implementation_1.cpp:2:5: error: use of undeclared identifier 'nope'", "    nope;"};
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: does not build (1.50 s: build 1.25 s, check 0.20 s)\n"
            "  relu/relu_implementation_1.cpp:2:5: error: use of undeclared identifier 'nope'\n      nope;");
  reward.outcome = "error";
  reward.reason = "'relu' is not an operator of the suites edge";
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: not checked: 'relu' is not an operator of the suites edge");
}

TEST(Watch, AFolderThatCannotBeWatchedIsOneLocatedError) {
  Scratch scratch;
  try {
    KernelFolderWatch watch(scratch.path() + "/missing");
    FAIL() << "a missing folder was watched";
  } catch (const CliError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(scratch.path() + "/missing: error: cannot watch this folder: ", 0), 0u)
        << error.what();
  }
}

}  // namespace
}  // namespace backendbench::cli
