// Unit tests of language/json_text.h: the project's one way in and out of JSON text.
#include <gtest/gtest.h>

#include <sstream>

#include "language/json_text.h"

namespace backendbench::json_text {
namespace {

TEST(JsonText, TextReadBackIsTheValueWritten) {
  const nlohmann::json value = {{"op", "relu.default"}, {"speedup", 1.5}, {"flags", {"suspect"}}};
  EXPECT_EQ(parse(dump(value)), value);
  EXPECT_EQ(dump(value), R"({"flags":["suspect"],"op":"relu.default","speedup":1.5})");
  EXPECT_EQ(dump(nlohmann::json{{"a", 1}}, 1), "{\n \"a\": 1\n}");
}

TEST(JsonText, AnOrderedValueKeepsItsMembersInTheirOrder) {
  const nlohmann::ordered_json value = {{"schema", "backendbench-suite"}, {"version", 1}, {"excluded_inputs", 0}};
  EXPECT_EQ(dump(value), R"({"schema":"backendbench-suite","version":1,"excluded_inputs":0})");
  EXPECT_EQ(dump_replacing_invalid_utf8(value), dump(value));
}

TEST(JsonText, TextThatIsNotJsonThrowsWithWhereItStopped) {
  try {
    parse(std::string_view(R"({"op": relu})"));
    FAIL() << "parsed text that is not JSON";
  } catch (const nlohmann::json::parse_error& error) {
    EXPECT_EQ(error.byte, 8u);
  }
  EXPECT_TRUE(parse_or_discarded(std::string_view("{\"op\":")).is_discarded());
  EXPECT_FALSE(parse_or_discarded(std::string_view("[]")).is_discarded());
}

TEST(JsonText, AStreamIsReadToItsEnd) {
  std::istringstream whole(R"({"suite": "smoke"})");
  EXPECT_EQ(parse(whole).at("suite"), "smoke");
  std::istringstream cut(R"({"suite": )");
  EXPECT_TRUE(parse_or_discarded(cut).is_discarded());
}

TEST(JsonText, BytesThatAreNotUtf8FailOrAreReplaced) {
  const nlohmann::json message = {{"message", std::string("bad \xff byte")}};
  EXPECT_THROW(dump(message), nlohmann::json::type_error);
  EXPECT_EQ(dump_replacing_invalid_utf8(message), "{\"message\":\"bad \xef\xbf\xbd byte\"}");
}

}  // namespace
}  // namespace backendbench::json_text
