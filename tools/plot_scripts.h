// Running the project's Python plotting scripts from the CLI (matplotlib through Debian's python3).
#pragma once

#include <string>
#include <vector>

namespace ffnshape::cli {

// The running ffnshape binary (from /proc/self/exe; "ffnshape" when that cannot be read).
std::string executable_path();

// Runs scripts/NAME with `args`; the script is looked for in $FFNSHAPE_SCRIPTS, next to the source
// tree of a build (BIN/../scripts) and in an install (BIN/../share/ffnshape/scripts). Plots are a
// convenience: when the script or python is missing, or it fails, a warning is printed and false
// returned, and the command goes on.
bool run_plot_script(const std::string& name, const std::vector<std::string>& args);

}  // namespace ffnshape::cli
