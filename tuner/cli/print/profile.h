// What `ktune profile` and `tune --profile-top` print: per profiled
// configuration its counters and roofline position, as a table or JSON.
#pragma once

#include <ostream>
#include <vector>

#include "db/record/record.h"
#include "tuner/cli/print/json.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/profile.h"

namespace ktune::cli {

// A roofline position in one table cell: "memory 98.2%", the bandwidth where
// the device's roofs are unknown, "-" for none.
std::string roofline_text(const std::optional<db::Roofline>& r);

Json profile_json(const Spec& spec, const db::DeviceInfo& device, const std::vector<tune::ProfiledRow>& rows);
void print_profile(const Spec& spec, const db::DeviceInfo& device, const std::vector<tune::ProfiledRow>& rows,
                   bool json, std::ostream& out);

}  // namespace ktune::cli
