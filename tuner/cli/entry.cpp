#include "tuner/cli/entry.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

#include "ktune/error.h"
#include "tuner/cli/cli.h"

namespace ktune::cli {

int run_command_line(int argc, char** argv) {
  CLI::App app{"ktune: a CUDA kernel autotuner (NVRTC, SQLite, Kernel Tuner formats)", "ktune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KTUNE_VERSION);
  CommandResult result;
  add_space_command(app, result);
  add_compile_command(app, result);
  add_tune_command(app, result);
  add_run_command(app, result);
  add_query_commands(app, result);
  add_interop_commands(app, result);
  add_merge_command(app, result);
  add_devices_command(app, result);
  add_profile_command(app, result);
  add_strategies_command(app, result);
  add_compare_command(app, result);
  add_report_command(app, result);
  refuse_negative_counts(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage hint
    return 2;
  } catch (const ktune::Cancelled&) {  // Ctrl-C inside a command that has nothing to report
    std::fflush(stdout);
    std::cerr << "ktune: interrupted\n";
    return 130;
  } catch (const ktune::Error& e) {
    std::fflush(stdout);
    std::cerr << "ktune: " << e.what() << '\n';
    return e.exit_status();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "ktune: internal error: " << e.what() << '\n';
    return 1;
  }
  return result.exit_status;
}

}  // namespace ktune::cli
