// ktune: entry point. Maps every failure to the contract's exit statuses:
// 0 success, 1 work ran but failed, 2 bad input (never a crash or stack trace).
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

#include "ktune/error.h"
#include "tuner/cli/cli.h"
#include "tuner/gpu/worker.h"

int main(int argc, char** argv) {
  ktune::enter_worker_if_requested();  // a compile child or the GPU worker serves here and exits
  CLI::App app{"ktune: a CUDA kernel autotuner (NVRTC, SQLite, Kernel Tuner formats)", "ktune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KTUNE_VERSION_STRING);
  ktune::cli::CommandResult result;
  ktune::cli::add_space_command(app, result);
  ktune::cli::add_compile_command(app, result);
  ktune::cli::add_tune_command(app, result);
  ktune::cli::add_query_commands(app, result);
  ktune::cli::add_interop_commands(app, result);
  ktune::cli::add_merge_command(app, result);
  ktune::cli::add_devices_command(app, result);
  ktune::cli::add_profile_command(app, result);
  ktune::cli::add_strategies_command(app, result);
  ktune::cli::add_compare_command(app, result);
  ktune::cli::add_report_command(app, result);
  ktune::cli::refuse_negative_counts(app);
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
