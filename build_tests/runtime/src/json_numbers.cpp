// Non-finite figures in JSON; see json_numbers.h.
#include "backendbench/json_numbers.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "language/json_text.h"

namespace backendbench {

nlohmann::json json_number(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "NaN";
  return value > 0 ? "Infinity" : "-Infinity";
}

nlohmann::json number_or_null(double value) { return std::isnan(value) ? nlohmann::json() : json_number(value); }

double number_from_json(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  throw std::invalid_argument(json_text::dump(value).substr(0, 40) + " is not a figure; expected a number, \"Infinity\", \"-Infinity\" or \"NaN\"");
}

double number_field(const nlohmann::json& object, const std::string& key, double if_missing) {
  const auto found = object.find(key);
  if (found == object.end()) return if_missing;
  try {
    return number_from_json(*found);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument("\"" + key + "\": " + error.what());
  }
}

}  // namespace backendbench
