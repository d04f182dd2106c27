// The whole command line as one call: what `ktune ARGS...` does, for the
// executable's main() and for a host program that runs ktune's commands in
// its own process (the Python package).
#pragma once

namespace ktune::cli {

// Parses argv (argv[0] is the program's name) and runs the command. Returns
// the exit status of the contract: 0 success, 1 the work ran but failed, 2
// bad input; errors are printed to stderr as "ktune: message".
int run_command_line(int argc, char** argv);

}  // namespace ktune::cli
