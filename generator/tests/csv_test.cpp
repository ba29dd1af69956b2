// Unit tests of language/csv.h: the one quoting rule of the project's CSV files.
#include <gtest/gtest.h>

#include "language/csv.h"

namespace backendbench::csv {
namespace {

TEST(Csv, PlainTextStaysAsItIs) {
  EXPECT_EQ(field("relu.default"), "relu.default");
  EXPECT_EQ(field(""), "");
}

TEST(Csv, CommasQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(field("((T([2], f32), 1), {})"), "\"((T([2], f32), 1), {})\"");
  EXPECT_EQ(field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(field("a\nb"), "\"a\nb\"");
  EXPECT_EQ(field("a\rb"), "\"a\rb\"");
}

}  // namespace
}  // namespace backendbench::csv
