// How many CPUs this process may use for compiling.
#pragma once

namespace ktune {

// The CPUs this process may run on: its affinity mask (a cpuset, or the
// binding an MPI launcher gives each rank), which can be far fewer than the
// machine's hardware threads; at least 1.
unsigned usable_cpus();

// This process's part of the CPUs when `sharers` processes of one host (the
// MPI ranks there) compile at once: the usable CPUs divided among them where
// the process may run on the whole host; all of its usable CPUs where it is
// bound to fewer (a launcher that binds gives each rank CPUs of its own). At
// least 1.
unsigned shared_cpus(unsigned sharers);

}  // namespace ktune
