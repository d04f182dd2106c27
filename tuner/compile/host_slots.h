// HostSlots: one budget of concurrent compiles for every ktune process of a
// host (the GPUs of one run share a CompilePool already; the ranks of an MPI
// job, and other runs, each have their own). Without it N ranks of a host
// either run N compiles per core (a pool each, as large as the host) or leave
// cores idle (a pool each of 1/N of the host) while one rank's space is
// compile-bound and another's is not.
//
// A slot is a one-byte open-file-description lock (F_OFD_SETLK) in a file
// in /dev/shm, the host's own memory: each holder opens the file itself, so
// threads of one process hold slots independently, and the kernel releases a
// slot when its holder's process dies, however it dies. The budget is the
// host's online CPUs by default.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

namespace ktune {

class HostSlots {
 public:
  // The lock file of this user's processes on this host, and the host's CPUs.
  static std::string default_path();
  static unsigned host_cpus();

  // `slots` compiles at once over every holder of the file at `path`
  // (created when missing). Throws Error::failed when it cannot be opened.
  HostSlots(std::string path, unsigned slots);

  // A slot held until destroyed.
  class Held {
   public:
    explicit Held(int fd) : fd_(fd) {}
    Held(Held&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Held& operator=(Held&& o) noexcept;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held();

   private:
    int fd_;
  };
  // Waits for a free slot; nullopt once `stopping` is set. Thread-safe.
  std::optional<Held> acquire(const std::atomic<bool>& stopping) const;
  // Takes a free slot if there is one, at once.
  std::optional<Held> try_acquire() const;
  // How many slots are held now, by anyone (for tests and reports).
  unsigned held() const;
  unsigned slots() const { return slots_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  unsigned slots_;
  mutable std::mutex waiting_;  // acquire()'s pollers, one at a time
};

}  // namespace ktune
