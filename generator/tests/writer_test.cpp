// Generated files are written only when their content changes, and stale ones are removed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "emit/writer.h"
#include "scratch_directory.h"

namespace backendbench::emit {
namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream stream(path);
  std::stringstream buffer;
  buffer << stream.rdbuf();
  return buffer.str();
}

using Writer = testing::ScratchDirectoryTest;

TEST_F(Writer, WritesOnlyChangedContent) {
  {
    OutputWriter writer(root_.string());
    EXPECT_TRUE(writer.write("a/x.cpp", "one"));
    EXPECT_EQ(read(root_ / "a/x.cpp"), "one");
  }
  const auto before = fs::last_write_time(root_ / "a/x.cpp");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  OutputWriter again(root_.string());
  EXPECT_FALSE(again.write("a/x.cpp", "one"));
  EXPECT_EQ(fs::last_write_time(root_ / "a/x.cpp"), before);
  EXPECT_TRUE(again.write("a/x.cpp", "two"));
  EXPECT_EQ(read(root_ / "a/x.cpp"), "two");
  EXPECT_EQ(again.changed(), 1);
  EXPECT_EQ(again.outputs(), (std::vector<std::string>{"a/x.cpp", "a/x.cpp"}));
  EXPECT_FALSE(fs::exists(root_ / "a/x.cpp.tmp"));
}

TEST_F(Writer, RemovesStaleFilesButKeepsTheListed) {
  {
    OutputWriter first(root_.string());
    first.write("old.cpp", "x");
    first.write("kept.cpp", "x");
  }
  std::ofstream(root_ / "generate.stamp") << "";
  OutputWriter second(root_.string());
  second.write("kept.cpp", "x");
  const auto removed = second.remove_stale({"generate.stamp"});
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(fs::path(removed[0]).filename(), "old.cpp");
  EXPECT_TRUE(fs::exists(root_ / "kept.cpp"));
  EXPECT_TRUE(fs::exists(root_ / "generate.stamp"));
}

}  // namespace
}  // namespace backendbench::emit
