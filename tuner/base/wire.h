// The framing and encoding shared by ktune's worker processes (the GPU worker
// and the compile children): a message is a 4-byte type, an 8-byte payload
// length and the payload. The encoding is private to one build of ktune (both
// ends are the same binary), so it carries no version; every read is
// bounds-checked and a malformed message is an Error.
//
// A type is encoded by a `fields(A& a, T& value)` function template, found by
// argument-dependent lookup in T's namespace, that lists its members once:
// `a(v.x, v.y)`. Writer appends them, Reader fills them, so the two directions
// cannot drift apart.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ktune/error.h"

namespace ktune::wire {

// One field list per type serves both directions: Writer appends, Reader fills.
class Writer {
 public:
  std::vector<std::uint8_t> bytes;

  template <class... T>
  void operator()(T&... values) { (put(values), ...); }

 private:
  template <class T>
  void put(T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
      bytes.insert(bytes.end(), p, p + sizeof v);
    } else {
      fields(*this, v);
    }
  }
  void put(std::string& s) { put_blob(s.data(), s.size()); }
  void put(std::filesystem::path& p) {
    std::string s = p.string();
    put(s);
  }
  void put(std::vector<std::uint8_t>& v) { put_blob(v.data(), v.size()); }
  template <class X, class Y>
  void put(std::pair<X, Y>& p) { put(p.first); put(p.second); }
  template <class K, class V>
  void put(std::map<K, V>& m) {
    std::uint64_t n = m.size();
    put(n);
    for (auto& [k, v] : m) {
      K key = k;
      put(key);
      put(v);
    }
  }
  template <class T>
  void put(std::vector<T>& v) {
    std::uint64_t n = v.size();
    put(n);
    for (auto& x : v) put(x);
  }
  template <class T>
  void put(std::optional<T>& v) {
    bool has = v.has_value();
    put(has);
    if (has) put(*v);
  }
  template <class T, std::size_t N>
  void put(std::array<T, N>& a) { for (auto& x : a) put(x); }
  template <class T, std::size_t N>
  void put(T (&a)[N]) { for (auto& x : a) put(x); }
  void put_blob(const void* data, std::size_t size) {
    std::uint64_t n = size;
    put(n);
    const auto* p = static_cast<const std::uint8_t*>(data);
    bytes.insert(bytes.end(), p, p + size);
  }
};

class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& b) : bytes_(b) {}

  template <class... T>
  void operator()(T&... values) { (get(values), ...); }
  void finish() const {
    if (pos_ != bytes_.size()) throw Error::failed("worker protocol: trailing bytes");
  }

 private:
  const std::uint8_t* take(std::uint64_t n) {
    if (n > bytes_.size() - pos_) throw Error::failed("worker protocol: truncated message");
    const std::uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  template <class T>
  void get(T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      std::memcpy(&v, take(sizeof v), sizeof v);
    } else {
      fields(*this, v);
    }
  }
  void get(std::string& s) {
    std::uint64_t n = 0;
    get(n);
    const auto* p = take(n);
    s.assign(reinterpret_cast<const char*>(p), n);
  }
  void get(std::filesystem::path& p) {
    std::string s;
    get(s);
    p = std::move(s);
  }
  void get(std::vector<std::uint8_t>& v) {
    std::uint64_t n = 0;
    get(n);
    const auto* p = take(n);
    v.assign(p, p + n);
  }
  template <class T>
  void get(std::vector<T>& v) {
    std::uint64_t n = 0;
    get(n);
    if (n > bytes_.size() - pos_) throw Error::failed("worker protocol: bad element count");
    v.assign(n, T{});
    for (auto& x : v) get(x);
  }
  template <class X, class Y>
  void get(std::pair<X, Y>& p) { get(p.first); get(p.second); }
  template <class K, class V>
  void get(std::map<K, V>& m) {
    std::uint64_t n = 0;
    get(n);
    if (n > bytes_.size() - pos_) throw Error::failed("worker protocol: bad element count");
    m.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      std::pair<K, V> kv;
      get(kv);
      m.insert_or_assign(std::move(kv.first), std::move(kv.second));
    }
  }
  template <class T>
  void get(std::optional<T>& v) {
    bool has = false;
    get(has);
    v.reset();
    if (has) get(v.emplace());
  }
  template <class T, std::size_t N>
  void get(std::array<T, N>& a) { for (auto& x : a) get(x); }
  template <class T, std::size_t N>
  void get(T (&a)[N]) { for (auto& x : a) get(x); }

  const std::vector<std::uint8_t>& bytes_;
  std::size_t pos_ = 0;
};

template <class T>
inline std::vector<std::uint8_t> write(const T& value) {
  Writer w;
  w(const_cast<T&>(value));  // Writer only reads; one field list serves both ways
  return std::move(w.bytes);
}

template <class T>
inline T read(const std::vector<std::uint8_t>& payload) {
  T value{};
  Reader r(payload);
  r(value);
  r.finish();
  return value;
}

struct Frame {
  std::uint32_t type = 0;
  std::vector<std::uint8_t> payload;
};

// Whole-frame I/O on a blocking stream socket. send_frame returns false when
// the peer is gone (no SIGPIPE); receive_frame returns nullopt on EOF and
// throws Error on a malformed frame (a type above max_type, a payload over
// 64 GiB, EOF inside the frame).
bool send_frame(int fd, std::uint32_t type, const std::vector<std::uint8_t>& payload);
std::optional<Frame> receive_frame(int fd, std::uint32_t max_type);

}  // namespace ktune::wire
