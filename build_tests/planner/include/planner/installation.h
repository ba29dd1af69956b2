// Where this build of backendbench lives: fixed when the command was built (installation.cpp).
#pragma once

#include <string>

namespace backendbench::planner {

struct Installation {
  std::string source_directory, build_directory, templates_directory, plotly_js_path;
};
Installation installation();

}  // namespace backendbench::planner
