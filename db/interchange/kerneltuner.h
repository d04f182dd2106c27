// Kernel Tuner cache files (docs/formats.md), read and write.
//
// Reading accepts every variant in the wild: interrupted files (not closed;
// repaired, and a partial last record dropped), the legacy failure encoding
// (an error string in place of any value) and `__error__`, problem_size as
// int, list, "callable" or absent, objective as string, list or absent, and
// string/bool/float parameters (types inferred from tune_params). Numeric
// fields that are not parameters or known times become observer fields or
// user metrics. Malformed input throws Error::bad_input naming file and line.
//
// Writing produces the canonical, terminated form: keys are the parameter
// values as Python's str() joined by ','; failed records carry `__error__`
// and the error string as `time` so old and new Kernel Tuner both see them.
// Timeout and wrong-result, which Kernel Tuner has no name for, are written as
// RuntimeFailedConfig plus a `ktune_status` field that ktune reads back.
#pragma once

#include <string>

#include "db/interchange/result_set.h"

namespace ktune::db {

// `source` names the text in error messages (usually the path).
ResultSet parse_kernel_tuner(const std::string& text, const std::string& source);
ResultSet read_kernel_tuner(const std::string& path);

std::string format_kernel_tuner(const ResultSet& rs);
void write_kernel_tuner(const ResultSet& rs, const std::string& path);

}  // namespace ktune::db
