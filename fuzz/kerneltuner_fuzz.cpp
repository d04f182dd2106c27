// A Kernel Tuner cache, as `ktune import`, `--simulate` and `--prior` read
// it: accepted files are written back and must read again.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "results_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_answer([&] {
    const ktune::db::ResultSet rs = ktune::fuzz::read(text, false);
    if (rs.format != "kernel-tuner") return;  // a gzipped T4 file
    ktune::fuzz::check_round_trip(rs, ktune::db::format_kernel_tuner(rs), false);
  });
  return 0;
}
