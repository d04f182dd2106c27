#include "tuner/base/worker_program.h"

#include <unistd.h>

#include <mutex>

namespace ktune {
namespace {

std::mutex mutex;
std::string chosen;

}  // namespace

std::string worker_program() {
  {
    std::lock_guard lock(mutex);
    if (!chosen.empty()) return chosen;
  }
  char path[4096];
  const ssize_t len = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (len <= 0) return {};
  return std::string(path, static_cast<std::size_t>(len));
}

void set_worker_program(std::string path) {
  std::lock_guard lock(mutex);
  chosen = std::move(path);
}

}  // namespace ktune
