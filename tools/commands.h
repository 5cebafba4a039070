// Subcommands of the ffnshape CLI. Each registers its options on `app` and returns it with the function
// that runs it once parsing succeeded; that function returns the process exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

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

}  // namespace ffnshape::cli
