// CSV fields as RFC 4180 writes them: the one quoting rule of every CSV file the project writes
// (the generator's excluded.csv, the results folder's operator_summary.csv).
#pragma once

#include <string>

namespace backendbench::csv {

// The text as one field: quoted (inner quotes doubled) when it holds a comma, a quote or a line
// break; as it is otherwise.
std::string field(const std::string& text);

}  // namespace backendbench::csv
