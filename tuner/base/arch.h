// Arch names a compile target: "sm_90", "sm_90a", "compute_90", "90" or "9.0"
// all read as sm_90 (with its "a"/"f" suffix kept).
#pragma once

#include <string>
#include <string_view>

namespace ktune {

struct Arch {
  int sm = 0;          // 10 * major + minor: 90 for sm_90a
  std::string suffix;  // "", "a" (arch-specific) or "f" (family)

  Arch() = default;
  Arch(int sm_number) : sm(sm_number) {}  // NOLINT: 90 reads as sm_90
  // Accepts "sm_90", "sm_90a", "compute_90", "90", "90a", "9.0". Throws
  // Error::bad_input on anything else.
  static Arch parse(std::string_view text);

  int major() const { return sm / 10; }
  int minor() const { return sm % 10; }
  std::string name() const { return "sm_" + std::to_string(sm) + suffix; }  // "sm_90a"
  bool operator==(const Arch&) const = default;
};

}  // namespace ktune
