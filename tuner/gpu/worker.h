// The GPU worker: the child process that owns the CUDA context.
//
// worker_main() runs in a process Engine (tuner/gpu/engine.h) started
// by fork + exec of the same program. It loads the driver, opens one GPU, says
// Ready, then serves Jobs one at a time: load the cubin, check the launch
// against the device, upload arguments (once per distinct argument list), run
// once to verify or capture outputs, measure, read NVML. Every failure of a
// configuration becomes a Result status. After a sticky CUDA error (illegal
// address, trap, misaligned access, ...) it reports and exits, because its
// context can no longer run anything; the parent starts a fresh worker.
// Progress messages before each batch of launches let the parent tell a slow
// kernel from a hung one.
#pragma once

#include "tuner/compile/pool.h"

namespace ktune {

// ktune starts its compile children and its GPU worker by executing its own
// program (worker_program(), tuner/base/worker_program.h) with an environment
// variable that says which.
// Every program that links the tuner calls this first in main(): in such a
// child it serves its parent and exits, never returning; elsewhere it returns
// at once. `hooks` reach the compile children (tests inject faults there).
void enter_worker_if_requested(const CompileChildHooks& hooks = {});

}  // namespace ktune

namespace ktune::gpu {

// In a process an Engine started as its GPU worker: serves it (worker_main)
// and exits; never returns. Elsewhere it returns at once.
void serve_if_gpu_worker();

// Serves the parent on socket fd; gpu < 0 lists devices only. Never returns:
// the process ends with _exit (0 on Shutdown or EOF, 3 after a sticky error).
[[noreturn]] void worker_main(int fd, int gpu);

}  // namespace ktune::gpu
