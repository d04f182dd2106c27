// Shared by the fuzz targets: what counts as a finding.
//
// ktune answers hostile input with ktune::Error (bad input, exit 2, located;
// or failed work, exit 1). Anything else escaping is a finding: another
// exception (which the command line would print as "internal error"), a
// crash, a hang, a leak or a sanitizer report (libFuzzer and the sanitizers
// catch those themselves).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "ktune/error.h"

namespace ktune::fuzz {

// Runs f; a ktune::Error is an answer, anything else aborts (a finding).
// Bad input must say where: an Error of kind BadInput without a file is a
// finding too, as the contract wants file:line:col for it.
template <class F>
void expect_answer(F&& f, bool located = true) {
  try {
    f();
  } catch (const Error& e) {
    if (located && e.kind() == Error::Kind::BadInput && e.where().file.empty()) {
      std::fprintf(stderr, "bad input without a location: %s\n", e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "escaped (an internal error on the command line): %s\n", e.what());
    std::abort();
  }
}

}  // namespace ktune::fuzz
