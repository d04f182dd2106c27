// KTT (Kernel Tuning Toolkit) output files, read (docs/formats.md).
//
// KTT 2.x writes its tuning results as JSON: `Metadata` (Device, TimeUnit,
// KttVersion, ...) and `Results`, one per configuration, each with its
// `Configuration` as a list of {Name, Value, ValueType}, a `Status` (Ok,
// ComputationFailed, CompilationFailed, ValidationFailed,
// DeviceLimitsExceeded) and `TotalDuration` in the file's TimeUnit, plus per
// kernel `ComputationResults` with the compiler's figures. Read only: ktune
// writes Kernel Tuner's formats. Malformed input throws Error::bad_input
// naming file and line.
#pragma once

#include <string>

#include "db/interchange/result_set.h"

namespace ktune::db {

ResultSet parse_ktt(const std::string& text, const std::string& source);

}  // namespace ktune::db
