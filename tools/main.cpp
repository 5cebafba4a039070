// ffnshape: the command-line tool. Thin: parse, call the library, map errors to exit codes.
#include <c10/util/Exception.h>

#include <iostream>
#include <vector>

#include "commands.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/train/data_error.h"
#include "ffnshape/train/distributed_env.h"
#include "ffnshape/train/process_group.h"

namespace {

// Bad config or data (exit 2) and runtime failures (exit 1) end the same way: one message, no trace.
int report(const char* message, int code) {
  std::cerr << "error: " << message << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ffnshape::cli;
  CLI::App app{"ffnshape: research on the shape of transformer feed-forward networks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::function<std::string()>(version_line));
  const std::vector<Subcommand> commands = {
      add_params_command(app),   add_iso_command(app),     add_train_command(app),
      add_eval_command(app),     add_data_command(app),    add_geometry_command(app),
      add_profile_command(app),  add_schedule_command(app), add_experiment_command(app),
      add_sweep_command(app),    add_import_command(app),  add_export_command(app),
      add_version_command(app),  add_generate_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    return kExitUsage;
  } catch (const ffnshape::ConfigError& e) {
    return report(e.what(), kExitUsage);
  } catch (const ffnshape::DistributedEnvError& e) {  // a launcher's variables that make no sense
    return report(e.what(), kExitUsage);
  } catch (const ffnshape::RendezvousError& e) {  // ranks launched so that they cannot meet
    return report(e.what(), kExitUsage);
  } catch (const ffnshape::DataError& e) {
    return report(e.what(), kExitUsage);
  } catch (const std::invalid_argument& e) {  // the geometry library's answer to unusable input
    return report(e.what(), kExitUsage);
  } catch (const c10::Error& e) {
    return report(e.what_without_backtrace(), kExitRuntime);
  } catch (const std::exception& e) {
    return report(e.what(), kExitRuntime);
  }
}
