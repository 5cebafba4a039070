// Subcommands of the ffnshape CLI. Each registers its options on `app` and returns it with the function
// that runs it once parsing succeeded; that function returns the process exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace ffnshape::cli {

using Command = std::function<int()>;

struct Subcommand {
  CLI::App* app;  // the parsed subcommand
  Command run;
};

// Exit codes (DESIGN.md): 0 success, 1 runtime failure, 2 usage or configuration error.
constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

Subcommand add_params_command(CLI::App& app);
Subcommand add_iso_command(CLI::App& app);
Subcommand add_train_command(CLI::App& app);
Subcommand add_eval_command(CLI::App& app);
Subcommand add_data_command(CLI::App& app);
Subcommand add_schedule_command(CLI::App& app);
Subcommand add_profile_command(CLI::App& app);
Subcommand add_geometry_command(CLI::App& app);
Subcommand add_experiment_command(CLI::App& app);
Subcommand add_sweep_command(CLI::App& app);
Subcommand add_version_command(CLI::App& app);
Subcommand add_generate_command(CLI::App& app);
Subcommand add_import_command(CLI::App& app);
Subcommand add_export_command(CLI::App& app);

// "ffnshape 0.1.0 (LibTorch 2.15.0, CUDA 13.2)": the first line of `ffnshape version`, and --version.
std::string version_line();

}  // namespace ffnshape::cli
