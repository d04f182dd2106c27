#include "tuner/base/arch.h"

#include <charconv>

#include "ktune/error.h"

namespace ktune {
namespace {

int parse_int(std::string_view text, std::size_t* used) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  *used = static_cast<std::size_t>(end - text.data());
  return ec == std::errc() ? v : -1;
}

}  // namespace

Arch Arch::parse(std::string_view text) {
  std::string_view rest = text;
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (rest.starts_with(prefix)) rest.remove_prefix(prefix.size());
  }
  std::size_t used = 0;
  int number = parse_int(rest, &used);
  rest.remove_prefix(used);
  if (number > 0 && rest.starts_with(".")) {  // "9.0"
    rest.remove_prefix(1);
    int minor = parse_int(rest, &used);
    rest.remove_prefix(used);
    number = (minor >= 0 && minor <= 9 && used == 1) ? number * 10 + minor : -1;
  }
  Arch arch;
  arch.sm = number;
  arch.suffix = std::string(rest);
  if (number < 10 || number > 999 || !(arch.suffix.empty() || arch.suffix == "a" || arch.suffix == "f")) {
    throw Error::bad_input("'" + std::string(text) +
                           "' is not a GPU architecture (expected e.g. sm_90, sm_90a, 90 or 9.0)");
  }
  return arch;
}

}  // namespace ktune
