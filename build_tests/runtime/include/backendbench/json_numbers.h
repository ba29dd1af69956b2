// Figures in JSON that stay what they are: JSON has no infinity or NaN (nlohmann writes them as
// null, which no reader can tell from "absent"), so a non-finite figure is written as one of the
// strings "Infinity", "-Infinity" or "NaN" (what JavaScript's Number() and Python's float() read
// back), and every reader of a verdict, a report or a reward takes a number or one of those.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace backendbench {

// `value` as a JSON number, or "Infinity", "-Infinity", "NaN".
nlohmann::json json_number(double value);

// Where NaN means "no figure" (a row or kernel without one): null; otherwise json_number.
nlohmann::json number_or_null(double value);

// The figure `value` holds: a number, one of the three strings, or null (what older files wrote
// for a non-finite figure: read as NaN). Throws std::invalid_argument otherwise.
double number_from_json(const nlohmann::json& value);

// `object[key]` as number_from_json reads it; `if_missing` where the object has no such key.
// The error names the key.
double number_field(const nlohmann::json& object, const std::string& key, double if_missing);

}  // namespace backendbench
