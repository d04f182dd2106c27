#!/bin/sh
# The CPU test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
# builds build-asan/ with -DKTUNE_SANITIZE=ON (GCC's sanitizers, which g++
# brings with it) and runs every CPU test there, the ktune binary and its
# worker processes included. A sanitizer report ends the process that made
# it, so the test fails; LeakSanitizer checks every process at exit. CI runs
# it after the plain suite (the README's test command).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KTUNE_SANITIZE_BUILD:-$root/build-asan}
jobs=${KTUNE_JOBS:-2}
launcher=""
command -v ccache >/dev/null 2>&1 && launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKTUNE_SANITIZE=ON -DKTUNE_BUILD_BENCH=OFF $launcher
cmake --build "$build" -j"$jobs"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
mpi_tests='^Mpi\.|^slurm_recipes$'
ctest --test-dir "$build" -LE "gpu|package" -E "$mpi_tests" --output-on-failure -j"$jobs"
# Open MPI leaves its own allocations (libmpi, its dlopen'ed plugins) for the
# process's end, which LeakSanitizer reports; the tests that run ktune under
# mpirun run with every address and undefined-behaviour check but the leak check.
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" ctest --test-dir "$build" -LE "gpu|package" -R "$mpi_tests" --output-on-failure -j"$jobs"
