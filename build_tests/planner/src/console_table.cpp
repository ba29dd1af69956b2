// The console's tables; see console_table.h.
#include "planner/console_table.h"

#include <algorithm>

namespace backendbench::planner {
namespace {

size_t characters(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

std::string table_text(const std::vector<TableColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                       const std::string& indent) {
  std::vector<size_t> widths;
  for (const TableColumn& column : columns) widths.push_back(characters(column.title));
  for (const std::vector<std::string>& row : rows) {
    for (size_t c = 0; c < columns.size() && c < row.size(); ++c) widths[c] = std::max(widths[c], characters(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string fill(widths[c] - characters(cell), ' ');
      if (c) text += "  ";
      text += columns[c].right_aligned ? fill + cell : c + 1 == columns.size() ? cell : cell + fill;
    }
    return text + "\n";
  };
  std::vector<std::string> titles;
  for (const TableColumn& column : columns) titles.push_back(column.title);
  std::string text = line(titles);
  for (const std::vector<std::string>& row : rows) text += line(row);
  return text;
}

std::string short_backend_name(const std::string& label) {
  std::string name = label;
  const size_t folder = name.find(" (");
  if (folder != std::string::npos && name.back() == ')' && name.find('/', folder) != std::string::npos) name = name.substr(0, folder);
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  const size_t slash = name.find_last_of('/');
  if (slash != std::string::npos && slash + 1 < name.size()) name = name.substr(slash + 1);
  return name;
}

}  // namespace backendbench::planner
