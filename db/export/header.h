// The C++17 header export: the best configurations of one or several kernels
// as constexpr data with a constexpr select() per kernel.
//
// Layout (namespace configurable, default ktune_tuned):
//   namespace ktune_tuned::<kernel> {
//     struct Config { typed fields };              // int64_t, double, bool, const char*
//     namespace device { constexpr Config <dev>_<size> }  // best per device and size
//     namespace arch   { constexpr Config sm_XX_<size> }  // best among an arch's devices
//     constexpr Config most_often;                 // best for the most (device, size) pairs
//     namespace portable { constexpr Config size_<size> }  // most portable per size
//     constexpr Config fallback(long long problem_size_total);  // portable, else most_often
//     constexpr Config select(int cc, long long problem_size_total);
//     constexpr Config select(const char* device_name, int cc, long long problem_size_total);
//   }
// select() falls back: exact device (name variant), same compute capability,
// same major architecture (nearest minor), then the most portable
// configuration (db/portability.h) of the nearest problem size that has one,
// then most_often; within those the nearest problem size total. Kernel
// Tuner's defines (--kernel-tuner-defines) default to the most portable
// configuration of the problem size measured on the most devices. A field's
// type follows the values stored.
//
// Contract: deterministic (same input, same bytes; no dates but the results'
// own), every identifier valid, never a keyword, never reserved (no leading
// '_' or "__"), and unique in its scope (suffix _2, _3, ... on collision).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "db/export/deploy.h"

namespace ktune::db {

struct HeaderOptions {
  std::string namespace_name = "ktune_tuned";  // may be nested: "a::b"
  // Also write Kernel Tuner's #if defined(TARGET_<device>) / #define blocks.
  bool kernel_tuner_defines = false;
};

// Throws Error::bad_input when options.namespace_name is not a valid name.
std::string tuned_header(const std::vector<DeployKernel>& kernels, const HeaderOptions& options = {});

bool is_cpp_keyword(std::string_view s);
// Runs of characters outside [0-9A-Za-z] become one '_', leading/trailing ones
// dropped; a leading digit gets "k_" in front (nothing left gives "k"); a
// keyword gets a trailing '_'.
std::string sanitize_identifier(std::string_view name);
// Kernel Tuner's device macro: "TARGET_" + name with [^0-9a-zA-Z]+ -> '_'.
std::string kernel_tuner_target(std::string_view device);

// Hands out unique identifiers within one scope.
class IdentifierScope {
 public:
  explicit IdentifierScope(std::vector<std::string> reserved = {});
  // sanitize_identifier(name), with _2, _3, ... appended until unused (just
  // 2, 3, ... after a trailing '_', so never a reserved "__").
  std::string make(std::string_view name);

 private:
  std::set<std::string> used_{};
};

}  // namespace ktune::db
