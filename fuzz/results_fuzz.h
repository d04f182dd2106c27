// Reading a results file from fuzzed text, and what an accepted file must
// survive: whatever ktune reads it writes back, and reads again alike.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "db/interchange/interchange.h"
#include "db/interchange/kerneltuner.h"
#include "db/interchange/result_set.h"
#include "db/interchange/t4.h"

namespace ktune::fuzz {

inline void check_round_trip(const db::ResultSet& rs, const std::string& written, bool t4) {
  const db::ResultSet again = t4 ? db::parse_t4(written, "written.json") : db::parse_kernel_tuner(written, "written.json");
  // A cache keeps one record per configuration (the latest); T4 keeps them all.
  if (t4 && again.evaluations.size() != rs.evaluations.size()) {
    std::fprintf(stderr, "round trip lost results: %zu -> %zu\n", rs.evaluations.size(), again.evaluations.size());
    std::abort();
  }
  if (again.param_names != rs.param_names || again.problem_size != rs.problem_size) {
    std::fprintf(stderr, "round trip changed the parameters or the problem size\n");
    std::abort();
  }
}

// A gzipped input goes through the file reader, as `ktune import` reads it.
inline db::ResultSet read(const std::string& text, bool t4) {
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b) {
    char path[] = "/tmp/ktune-fuzz-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) std::abort();
    if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::abort();
    close(fd);
    struct Unlink {
      const char* p;
      ~Unlink() { unlink(p); }
    } unlink_at_exit{path};
    return db::read_results_file(path);
  }
  return t4 ? db::parse_t4(text, "fuzz.json") : db::parse_kernel_tuner(text, "fuzz.json");
}

}  // namespace ktune::fuzz
