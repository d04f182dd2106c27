// The test programs' main. They are also their own worker processes (the
// compile pool and the GPU engine execute this program), so the first thing
// is to serve as one when asked. The compile children get the test seam:
// a request with a -D named by KTUNE_COMPILE_TEST_CRASH kills its child with
// SIGSEGV, as NVRTC sometimes does; one named by KTUNE_COMPILE_TEST_HANG never
// gets an answer (a variable may name a define with its value, NAME=VALUE);
// with KTUNE_COMPILE_TEST_ORDER naming a file, each child appends the
// defines of every request it starts, a line each, so a test sees the order
// in which the pool hands requests out.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tuner/gpu/worker.h"

namespace {

bool has_define(const ktune::CompileRequest& request, const char* variable) {
  const char* name = std::getenv(variable);
  if (!name || !*name) return false;
  for (const auto& [define, value] : request.defines)
    if (define == name || define + "=" + value == name) return true;
  return false;
}

void inject_faults(const ktune::CompileRequest& request) {
  if (const char* log = std::getenv("KTUNE_COMPILE_TEST_ORDER"); log && *log) {
    std::string line;
    for (const auto& [define, value] : request.defines) line.append(define).append("=").append(value).append(" ");
    std::ofstream(log, std::ios::app) << line << "\n";
  }
  if (has_define(request, "KTUNE_COMPILE_TEST_HANG"))
    for (;;) ::pause();
  if (has_define(request, "KTUNE_COMPILE_TEST_CRASH")) {
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // a test should leave no core file behind
    ::signal(SIGSEGV, SIG_DFL);
    ::raise(SIGSEGV);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ktune::enter_worker_if_requested({.before_compile = inject_faults});
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
