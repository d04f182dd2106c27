// T4 tuning-results files (docs/formats.md), read and write.
//
// Reading accepts times.compilation_time and Kernel Tuner's times.compilation,
// metadata.timeunit in seconds/milliseconds/microseconds/nanoseconds, and
// maps invalidity correct/compile/runtime/constraints/timeout/correctness to
// ok/compile_error/runtime_error/invalid/timeout/wrong_result (a "correct"
// result with correctness 0 is wrong_result). The measurement named "time" is
// the objective's time; other measurements become observer fields or metrics.
//
// T4 names no device, kernel or problem size; ktune writes them as extra
// metadata keys (device_name, kernel_name, problem_size) and reads them back
// when present. Writing uses compilation_time and milliseconds.
#pragma once

#include <string>

#include "db/interchange/result_set.h"

namespace ktune::db {

ResultSet parse_t4(const std::string& text, const std::string& source);
ResultSet read_t4(const std::string& path);

std::string format_t4(const ResultSet& rs);
void write_t4(const ResultSet& rs, const std::string& path);

}  // namespace ktune::db
