// A T4 results file, as `ktune import` reads it: accepted files are written
// back and must read again with every result.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "results_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_answer([&] {
    const ktune::db::ResultSet rs = ktune::fuzz::read(text, true);
    if (rs.format != "t4") return;  // a gzipped cache
    ktune::fuzz::check_round_trip(rs, ktune::db::format_t4(rs), true);
  });
  return 0;
}
