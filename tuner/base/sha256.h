// SHA-256 (FIPS 180-4), used as the key of the on-disk cubin cache.
//
// The cache is content-addressed: two compilations that differ in any input
// byte must never share an entry, so the key needs a collision-resistant hash,
// not a fast 64-bit one. Sha256 is incremental (update() any number of times,
// then digest() once); hex() of a digest gives the 64-character file name.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ktune {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  void update(std::string_view bytes);
  // Feeds a length prefix, then the bytes: concatenations of fields can then
  // never collide ("ab"+"c" vs "a"+"bc").
  void update_field(std::string_view bytes);
  // REQUIRES: called at most once; update() is not allowed afterwards.
  Digest digest();

  static std::string hex(const Digest& digest);
  static std::string hex_of(std::string_view bytes);

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace ktune
