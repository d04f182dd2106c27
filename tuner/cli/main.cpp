// ktune: entry point. Maps every failure to the contract's exit statuses:
// 0 success, 1 work ran but failed, 2 bad input (never a crash or stack trace).
#include "tuner/cli/entry.h"
#include "tuner/gpu/worker.h"

int main(int argc, char** argv) {
  ktune::enter_worker_if_requested();  // a compile child or the GPU worker serves here and exits
  return ktune::cli::run_command_line(argc, argv);
}
