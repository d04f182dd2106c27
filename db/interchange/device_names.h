// The compute capability of a GPU known by its marketing name, for results
// whose files do not record it (Kernel Tuner caches, T4 files). Without it,
// imported devices would take no part in the architecture fallback of the
// exported header and the launcher.
#pragma once

#include <string_view>

namespace ktune::db {

// major * 10 + minor (e.g. 90 for "NVIDIA H100 80GB HBM3", 86 for "NVIDIA A10G"),
// or 0 when the name is not recognised. Matches whole words of the name,
// case-insensitively; the table is in device_names.cpp and docs/database.md.
int known_compute_capability(std::string_view device_name);

}  // namespace ktune::db
