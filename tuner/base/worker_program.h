// The program ktune executes for its compile children and its GPU worker.
//
// Both are started by fork + exec of a program that calls
// enter_worker_if_requested() first in main() (tuner/gpu/worker.h): by
// default this process's own (/proc/self/exe). A host program that cannot
// serve so, such as the Python interpreter that loads the `ktune` package,
// names a `ktune` executable instead.
#pragma once

#include <string>

namespace ktune {

// The program to execute; "" when it cannot be found (then compiles run in
// this process, and no GPU worker can start).
std::string worker_program();

// Sets the program for every later start ("" restores the default). Set it
// before any compile pool or GPU worker starts.
void set_worker_program(std::string path);

// How a worker process ended, from waitpid's status: "exit status N" or
// "signal N (its name)".
std::string describe_exit(int status);

}  // namespace ktune
