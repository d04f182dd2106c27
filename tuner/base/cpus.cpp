#include "tuner/base/cpus.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace ktune {

unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

unsigned shared_cpus(unsigned sharers) {
  const unsigned cpus = usable_cpus();
  if (sharers <= 1 || cpus < std::thread::hardware_concurrency()) return cpus;
  return std::max(1u, cpus / sharers);
}

}  // namespace ktune
