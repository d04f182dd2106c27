#include "tuner/base/wire.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace ktune::wire {
namespace {

// Messages above this are a corrupt frame, not data (outputs of a few GiB pass).
constexpr std::uint64_t kMaxPayload = std::uint64_t{64} << 30;

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// false on EOF before the first byte; throws on EOF in the middle.
bool read_all(int fd, void* data, std::size_t size) {
  auto* p = static_cast<std::uint8_t*>(data);
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (done == 0) return false;
      throw Error::failed("worker protocol: connection closed inside a message");
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool send_frame(int fd, std::uint32_t type, const std::vector<std::uint8_t>& payload) {
  std::uint8_t header[12];
  std::uint64_t n = payload.size();
  std::memcpy(header, &type, 4);
  std::memcpy(header + 4, &n, 8);
  return write_all(fd, header, sizeof header) && write_all(fd, payload.data(), payload.size());
}

std::optional<Frame> receive_frame(int fd, std::uint32_t max_type) {
  std::uint8_t header[12];
  if (!read_all(fd, header, sizeof header)) return std::nullopt;
  std::uint32_t t = 0;
  std::uint64_t n = 0;
  std::memcpy(&t, header, 4);
  std::memcpy(&n, header + 4, 8);
  if (t < 1 || t > max_type || n > kMaxPayload) throw Error::failed("worker protocol: malformed frame header");
  Frame f;
  f.type = t;
  f.payload.resize(n);
  if (n && !read_all(fd, f.payload.data(), n))
    throw Error::failed("worker protocol: connection closed inside a message");
  return f;
}

}  // namespace ktune::wire
