// The backendbench command's command line (CLI11): parses argv and runs the subcommand it names.
#pragma once

namespace backendbench::cli {

// The command's exit status (main.cpp returns it).
int command_line_main(int argc, char** argv);

}  // namespace backendbench::cli
