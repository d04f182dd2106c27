#include "tuner/compile/host_slots.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "ktune/error.h"

namespace ktune {
namespace {

int open_file(const std::string& path) { return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); }

// F_OFD_SETLK / F_OFD_GETLK on byte `i`.
int lock_byte(int fd, int command, short type, unsigned i, struct flock* out = nullptr) {
  struct flock l;
  std::memset(&l, 0, sizeof l);
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = static_cast<off_t>(i);
  l.l_len = 1;
  const int rc = ::fcntl(fd, command, &l);
  if (out) *out = l;
  return rc;
}

}  // namespace

std::string HostSlots::default_path() {
  const std::string dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return dir + "/ktune-compile-slots-" + std::to_string(::getuid());
}

unsigned HostSlots::host_cpus() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : std::max(1u, std::thread::hardware_concurrency());
}

HostSlots::HostSlots(std::string path, unsigned slots) : path_(std::move(path)), slots_(std::max(1u, slots)) {
  const int fd = open_file(path_);
  if (fd < 0) throw Error::failed("host compile slots: cannot open " + path_ + ": " + std::strerror(errno));
  ::close(fd);
}

HostSlots::Held& HostSlots::Held::operator=(Held&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

HostSlots::Held::~Held() {
  if (fd_ >= 0) ::close(fd_);  // closing the description releases its lock
}

std::optional<HostSlots::Held> HostSlots::try_acquire() const {
  const int fd = open_file(path_);
  if (fd < 0) return std::nullopt;
  // From a different byte each time, so that holders do not all probe the first.
  static std::atomic<unsigned> start{0};
  const unsigned first = start.fetch_add(1) % slots_;
  for (unsigned k = 0; k < slots_; ++k)
    if (lock_byte(fd, F_OFD_SETLK, F_WRLCK, (first + k) % slots_) == 0) return Held(fd);
  ::close(fd);
  return std::nullopt;
}

std::optional<HostSlots::Held> HostSlots::acquire(const std::atomic<bool>& stopping) const {
  if (std::optional<Held> h = try_acquire()) return h;
  // One thread of this object polls at a time, backing off to 10 ms: the
  // slots of a large pool waiting together would otherwise probe the file
  // thousands of times a second.
  std::unique_lock one(waiting_);
  for (int ms = 1; !stopping.load(); ms = std::min(10, ms + 1)) {
    if (std::optional<Held> h = try_acquire()) return h;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  return std::nullopt;
}

unsigned HostSlots::held() const {
  const int fd = open_file(path_);
  if (fd < 0) return 0;
  unsigned n = 0;
  for (unsigned i = 0; i < slots_; ++i) {
    struct flock l;
    if (lock_byte(fd, F_OFD_GETLK, F_WRLCK, i, &l) == 0 && l.l_type != F_UNLCK) ++n;
  }
  ::close(fd);
  return n;
}

}  // namespace ktune
