// How many CPUs this process may use for compiling.
#pragma once

namespace ktune {

// The CPUs this process may run on: its affinity mask (a cpuset, or the
// binding an MPI launcher gives each rank), which can be far fewer than the
// machine's hardware threads; at least 1.
unsigned usable_cpus();

}  // namespace ktune
