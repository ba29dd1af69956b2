// Unit tests of files.h: the POSIX folder helpers that replace std::filesystem next to libtorch.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "backendbench/files.h"

namespace backendbench {
namespace {

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = files::temporary_directory() + "/bb_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    files::remove_tree(root_);
  }
  void TearDown() override { files::remove_tree(root_); }
  std::string root_;
};

TEST_F(Files, MakeDirectoriesCreatesEveryMissingParentAndAcceptsAnExistingFolder) {
  files::make_directories(root_ + "/a/b/c");
  EXPECT_TRUE(exists(root_ + "/a/b/c"));
  EXPECT_NO_THROW(files::make_directories(root_ + "/a/b/c"));
}

TEST_F(Files, MakeDirectoriesThroughAFileNamesThePath) {
  files::make_directories(root_);
  std::ofstream(root_ + "/plain") << "x";
  try {
    files::make_directories(root_ + "/plain/below");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(root_ + "/plain"), std::string::npos) << error.what();
  }
}

TEST_F(Files, RemoveTreeRemovesEverythingButNeverFollowsALink) {
  const std::string outside = root_ + "_outside";
  files::make_directories(outside);
  std::ofstream(outside + "/kept") << "x";
  files::make_directories(root_ + "/a/b");
  std::ofstream(root_ + "/a/b/file") << "x";
  ASSERT_EQ(::symlink(outside.c_str(), (root_ + "/a/link").c_str()), 0);
  files::remove_tree(root_);
  EXPECT_FALSE(exists(root_));
  EXPECT_TRUE(exists(outside + "/kept"));
  files::remove_tree(outside);
  EXPECT_FALSE(exists(outside));
  EXPECT_NO_THROW(files::remove_tree(root_ + "/never_made"));
}

TEST_F(Files, FilesEndingWithSearchesEveryDepthAndSorts) {
  files::make_directories(root_ + "/z/deep");
  files::make_directories(root_ + "/a");
  for (const char* name : {"/z/deep/k.verdicts.jsonl", "/a/k.verdicts.jsonl", "/a/k.jsonl", "/top.verdicts.jsonl"}) {
    std::ofstream(root_ + name) << "{}";
  }
  files::make_directories(root_ + "/folder.verdicts.jsonl");  // a folder, not a file
  EXPECT_EQ(files::files_ending_with(root_, ".verdicts.jsonl"),
            (std::vector<std::string>{root_ + "/a/k.verdicts.jsonl", root_ + "/top.verdicts.jsonl",
                                      root_ + "/z/deep/k.verdicts.jsonl"}));
  EXPECT_TRUE(files::files_ending_with(root_ + "/missing", ".jsonl").empty());
}

TEST_F(Files, WriteWholeReplacesTheFileAndLeavesNoPartialOne) {
  files::make_directories(root_);
  files::write_whole(root_ + "/f.txt", "first");
  files::write_whole(root_ + "/f.txt", "second");
  std::ifstream in(root_ + "/f.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "second");
  EXPECT_FALSE(exists(root_ + "/f.txt.partial"));
  EXPECT_THROW(files::write_whole(root_ + "/missing/f.txt", "x"), std::runtime_error);
}

TEST_F(Files, NamesAndLinks) {
  files::make_directories(root_ + "/b");
  std::ofstream(root_ + "/a.txt") << "x";
  files::make_link(root_ + "/a.txt", root_ + "/b/link.txt");
  EXPECT_EQ(files::names_in(root_), (std::vector<std::string>{"a.txt", "b"}));
  EXPECT_TRUE(files::is_folder(root_ + "/b"));
  EXPECT_FALSE(files::is_folder(root_ + "/a.txt"));
  std::ifstream through(root_ + "/b/link.txt");
  std::string text;
  through >> text;
  EXPECT_EQ(text, "x");
  EXPECT_THROW(files::make_link(root_ + "/a.txt", root_ + "/b/link.txt"), std::runtime_error);
  EXPECT_TRUE(files::names_in(root_ + "/missing").empty());
  files::remove_tree(root_ + "/b");  // removes the link, not what it points at
  EXPECT_TRUE(exists(root_ + "/a.txt"));
}

}  // namespace
}  // namespace backendbench
