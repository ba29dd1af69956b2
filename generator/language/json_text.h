// JSON text in and out, compiled in one translation unit. nlohmann-json's lexer, parser and
// serializer are templates that every file calling json::parse or dump() instantiated and
// optimised again (verdict.cpp: 6.6 s at -O3, 5.0 s through these); the project's libraries and
// executables read and write JSON text through these functions instead (structure/json_text_once;
// tests may call nlohmann-json directly).
#pragma once

#include <nlohmann/json.hpp>

#include <istream>
#include <string>
#include <string_view>

namespace backendbench::json_text {

// The value `text` holds; throws nlohmann::json::parse_error (with the byte it stopped at) when
// it is not JSON.
nlohmann::json parse(std::string_view text);
// The same, a discarded value (is_discarded()) instead of the exception.
nlohmann::json parse_or_discarded(std::string_view text);
// The rest of `in`, read as JSON (throws as parse does).
nlohmann::json parse(std::istream& in);
nlohmann::json parse_or_discarded(std::istream& in);

// `value` as JSON text: on one line (indent -1), or one member a line indented by `indent`
// spaces. Strings that are not UTF-8 throw nlohmann::json::type_error.
std::string dump(const nlohmann::json& value, int indent = -1);
// On one line, every byte sequence that is not UTF-8 replaced by U+FFFD: for text a kernel's
// process wrote (messages, names), which must not stop the answer that carries it.
std::string dump_replacing_invalid_utf8(const nlohmann::json& value);
// The same for a value that keeps its members in the order they were added (files people read:
// suite.json, a job's line), which would otherwise be converted and sorted.
std::string dump(const nlohmann::ordered_json& value, int indent = -1);
std::string dump_replacing_invalid_utf8(const nlohmann::ordered_json& value);

}  // namespace backendbench::json_text
