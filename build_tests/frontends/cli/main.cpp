// backendbench: the one command over the harness; its command line is cli/command_line.h's.
#include "cli/command_line.h"

int main(int argc, char** argv) { return backendbench::cli::command_line_main(argc, argv); }
