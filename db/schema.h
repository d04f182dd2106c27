// Internal to ktune_db: the store's schema, its version history, and the
// checks that keep ktune from writing into a file that is not its own.
//
// The version lives in `PRAGMA user_version` (and, for people reading the file
// with sqlite3, in meta.schema_version). A database from an older ktune is
// migrated step by step in one write transaction per step; a newer one is
// refused. PRAGMA application_id marks the file as ktune's.
#pragma once

#include <sqlite3.h>

#include <string>

namespace ktune::db::detail {

constexpr int kSchemaVersion = 5;
constexpr int kApplicationId = 0x6B74756E;  // "ktun"

// What a read-only look at an open connection found. Throws Error::bad_input
// for a file that is not a ktune database or is from a newer schema; throws
// Error::failed for I/O or corruption. Writes nothing.
struct Probe {
  int version = 0;   // PRAGMA user_version
  bool empty = true; // no tables at all: a new file
};
Probe probe(sqlite3* db, const std::string& path);

// REQUIRES: a writable connection; probe() accepted the file. Creates the
// latest schema in an empty file or migrates an older one, in write
// transactions that re-check the version so concurrent openers agree.
void create_or_migrate(sqlite3* db, const std::string& path);

}  // namespace ktune::db::detail
