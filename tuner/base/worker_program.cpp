#include "tuner/base/worker_program.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

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

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  return "ended";
}

}  // namespace ktune
