// JSON text in and out (json_text.h): the one translation unit that instantiates nlohmann-json's
// lexer, parser and serializer.
#include "language/json_text.h"

#include <iterator>

namespace backendbench::json_text {

nlohmann::json parse(std::string_view text) { return nlohmann::json::parse(text); }

nlohmann::json parse_or_discarded(std::string_view text) {
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

nlohmann::json parse(std::istream& in) {
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse(std::string_view(text));
}

nlohmann::json parse_or_discarded(std::istream& in) {
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_or_discarded(std::string_view(text));
}

std::string dump(const nlohmann::json& value, int indent) { return value.dump(indent); }

std::string dump_replacing_invalid_utf8(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string dump(const nlohmann::ordered_json& value, int indent) { return value.dump(indent); }

std::string dump_replacing_invalid_utf8(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace backendbench::json_text
