// The console's tables: each column as wide as its widest cell, so that no name or path a run
// is given pushes the others out of their columns.
#pragma once

#include <string>
#include <vector>

namespace backendbench::planner {

struct TableColumn {
  std::string title;
  bool right_aligned = false;  // figures
};

// The table as lines, each indented by `indent`, columns two spaces apart; a row shorter than
// the columns is filled with empty cells. Widths count characters (UTF-8), not bytes.
std::string table_text(const std::vector<TableColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                       const std::string& indent = "  ");

// What a backend's label is called in a table: the label without the folder it names in
// parentheses, and a path's last part ("my kernels (/x/y)" → "my kernels", "/x/y/kernels/" →
// "kernels"); the label itself when it is short already.
std::string short_backend_name(const std::string& label);

}  // namespace backendbench::planner
