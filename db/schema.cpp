#include "db/schema.h"

#include "db/sqlite_util.h"
#include "ktune/error.h"

namespace ktune::db::detail {

namespace {

// The latest schema, created in one go in a new file. Keep in step with the
// migrations below and with docs/database.md.
const char* kCreateLatest = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE devices(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  cc_major INTEGER, cc_minor INTEGER, sm_count INTEGER, memory_bytes INTEGER,
  sm_clock_mhz INTEGER, memory_clock_mhz INTEGER,
  driver_version TEXT, cuda_version TEXT, nvrtc_version TEXT, uuid TEXT,
  copy_gbs REAL, fp32_gflops REAL);
CREATE TABLE kernels(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  source_hash TEXT NOT NULL DEFAULT '',
  spec_hash TEXT NOT NULL DEFAULT '',
  params TEXT NOT NULL,            -- JSON [{"name": ..., "type": "int"}, ...]
  UNIQUE(name, spec_hash));
CREATE TABLE problem_sizes(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,        -- "[4096,4096]"; "[]" = unknown
  x INTEGER, y INTEGER, z INTEGER);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  strategy TEXT, strategy_options TEXT, seed INTEGER, budget TEXT,
  started_at TEXT, ended_at TEXT, host TEXT, ktune_version TEXT,
  replay INTEGER NOT NULL DEFAULT 0, replay_source TEXT,
  imported_from TEXT);
CREATE TABLE evaluations(
  id INTEGER PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  psize_id INTEGER NOT NULL REFERENCES problem_sizes(id),
  config_key TEXT NOT NULL,
  config TEXT NOT NULL,            -- JSON list in the kernel's parameter order
  status TEXT NOT NULL CHECK(status IN ('ok','invalid','compile_error','runtime_error','timeout','wrong_result')),
  reason TEXT, log TEXT,
  time_ms REAL, min_ms REAL, mean_ms REAL, stddev_ms REAL, sample_count INTEGER,
  samples TEXT, metrics TEXT,
  registers INTEGER, shared_bytes INTEGER, local_bytes INTEGER, occupancy REAL,
  compile_ms REAL, verify_ms REAL, benchmark_ms REAL, strategy_ms REAL, framework_ms REAL,
  timestamp TEXT,
  sm_clock_mhz REAL, temperature_c REAL, power_w REAL, load_ms REAL, stopped_early INTEGER,
  energy_j REAL, throttled_samples INTEGER,
  dram_read_bytes REAL, dram_write_bytes REAL, dram_util REAL, l2_hit_rate REAL,
  load_requests REAL, load_sectors REAL, store_requests REAL, store_sectors REAL,
  achieved_occupancy REAL, sm_util REAL, tensor_util REAL, bank_conflicts REAL, flop REAL,
  profiled_ms REAL);
CREATE INDEX evaluations_key ON evaluations(kernel_id, device_id, psize_id, config_key);
)sql";

// Version 2's additions over version 1 that both a new file and a migrated one
// get: the series table, its trigger, the partial index and the fast view.
const char* kSeriesAndBest = R"sql(
CREATE TABLE series(
  kernel_id INTEGER NOT NULL, device_id INTEGER NOT NULL, psize_id INTEGER NOT NULL,
  PRIMARY KEY(kernel_id, device_id, psize_id)) WITHOUT ROWID;
CREATE TRIGGER evaluations_series AFTER INSERT ON evaluations BEGIN
  INSERT OR IGNORE INTO series VALUES (NEW.kernel_id, NEW.device_id, NEW.psize_id);
END;
CREATE INDEX evaluations_best ON evaluations(kernel_id, device_id, psize_id, time_ms)
  WHERE status = 'ok' AND time_ms IS NOT NULL;
CREATE VIEW best AS
SELECT e.* FROM series s
JOIN evaluations e ON e.id = (
  SELECT x.id FROM evaluations x
  WHERE x.kernel_id = s.kernel_id AND x.device_id = s.device_id AND x.psize_id = s.psize_id
    AND x.status = 'ok' AND x.time_ms IS NOT NULL
  ORDER BY x.time_ms, x.id LIMIT 1);
)sql";

// 1 -> 2: device state columns, the import marker on runs, and a `best` view
// that seeks one index entry per series instead of scanning every evaluation.
const char* kMigrate1To2 = R"sql(
ALTER TABLE runs ADD COLUMN imported_from TEXT;
ALTER TABLE evaluations ADD COLUMN sm_clock_mhz REAL;
ALTER TABLE evaluations ADD COLUMN temperature_c REAL;
ALTER TABLE evaluations ADD COLUMN power_w REAL;
DROP VIEW IF EXISTS best;
)sql";

// 2 -> 3: the module load time of a configuration, apart from the framework's.
const char* kMigrate2To3 = R"sql(
ALTER TABLE evaluations ADD COLUMN load_ms REAL;
)sql";

// 3 -> 4: the racing mark (sampling stopped early).
const char* kMigrate3To4 = R"sql(
ALTER TABLE evaluations ADD COLUMN stopped_early INTEGER;
)sql";

// 4 -> 5: energy, throttling, hardware counters, and the devices' measured limits.
const char* kMigrate4To5 = R"sql(
ALTER TABLE devices ADD COLUMN copy_gbs REAL;
ALTER TABLE devices ADD COLUMN fp32_gflops REAL;
ALTER TABLE evaluations ADD COLUMN energy_j REAL;
ALTER TABLE evaluations ADD COLUMN throttled_samples INTEGER;
ALTER TABLE evaluations ADD COLUMN dram_read_bytes REAL;
ALTER TABLE evaluations ADD COLUMN dram_write_bytes REAL;
ALTER TABLE evaluations ADD COLUMN dram_util REAL;
ALTER TABLE evaluations ADD COLUMN l2_hit_rate REAL;
ALTER TABLE evaluations ADD COLUMN load_requests REAL;
ALTER TABLE evaluations ADD COLUMN load_sectors REAL;
ALTER TABLE evaluations ADD COLUMN store_requests REAL;
ALTER TABLE evaluations ADD COLUMN store_sectors REAL;
ALTER TABLE evaluations ADD COLUMN achieved_occupancy REAL;
ALTER TABLE evaluations ADD COLUMN sm_util REAL;
ALTER TABLE evaluations ADD COLUMN tensor_util REAL;
ALTER TABLE evaluations ADD COLUMN bank_conflicts REAL;
ALTER TABLE evaluations ADD COLUMN flop REAL;
ALTER TABLE evaluations ADD COLUMN profiled_ms REAL;
)sql";

int pragma_int(sqlite3* db, const std::string& path, const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) throw_sqlite(db, path, "reading the schema");
  int rc = sqlite3_step(s);
  int v = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) throw_sqlite(db, path, "reading the schema");
  return v;
}

void set_version(sqlite3* db, const std::string& path, int v) {
  std::string sql = "PRAGMA user_version = " + std::to_string(v) +
                    "; INSERT OR REPLACE INTO meta VALUES ('schema_version', '" + std::to_string(v) + "');";
  exec(db, path, sql.c_str());
}

// Runs `body` inside BEGIN IMMEDIATE if the version is still `expected`.
template <class F>
void step_if_version(sqlite3* db, const std::string& path, int expected, F body) {
  exec(db, path, "BEGIN IMMEDIATE");
  try {
    if (pragma_int(db, path, "PRAGMA user_version") == expected) body();
    exec(db, path, "COMMIT");
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace

Probe probe(sqlite3* db, const std::string& path) {
  Probe p;
  int tables = pragma_int(db, path, "SELECT count(*) FROM sqlite_master");
  p.version = pragma_int(db, path, "PRAGMA user_version");
  int app = pragma_int(db, path, "PRAGMA application_id");
  p.empty = tables == 0;
  bool ours = app == kApplicationId || (app == 0 && p.version > 0 &&
                                        pragma_int(db, path, "SELECT count(*) FROM sqlite_master "
                                                             "WHERE name = 'meta' AND type = 'table'") == 1);
  if (!p.empty && !ours)
    throw Error::bad_input(path + " is a SQLite database but not a ktune results database; refusing to modify it");
  if (p.version > kSchemaVersion)
    throw Error::bad_input(path + " has results schema version " + std::to_string(p.version) +
                           ", newer than this ktune supports (" + std::to_string(kSchemaVersion) +
                           "); use a newer ktune");
  return p;
}

void create_or_migrate(sqlite3* db, const std::string& path) {
  step_if_version(db, path, 0, [&] {
    // Re-check inside the lock: another process may have created tables.
    if (pragma_int(db, path, "SELECT count(*) FROM sqlite_master") != 0)
      throw Error::bad_input(path + " is not a ktune results database; refusing to modify it");
    exec(db, path, kCreateLatest);
    exec(db, path, kSeriesAndBest);
    exec(db, path, ("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
    exec(db, path, "INSERT INTO meta VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
    set_version(db, path, kSchemaVersion);
  });
  step_if_version(db, path, 1, [&] {
    exec(db, path, kMigrate1To2);
    exec(db, path, kSeriesAndBest);
    exec(db, path, "INSERT OR IGNORE INTO series SELECT DISTINCT kernel_id, device_id, psize_id FROM evaluations");
    exec(db, path, ("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
    set_version(db, path, 2);
  });
  step_if_version(db, path, 2, [&] {
    exec(db, path, kMigrate2To3);
    set_version(db, path, 3);
  });
  step_if_version(db, path, 3, [&] {
    exec(db, path, kMigrate3To4);
    set_version(db, path, 4);
  });
  step_if_version(db, path, 4, [&] {
    exec(db, path, kMigrate4To5);
    set_version(db, path, 5);
  });
  // Future steps go here: step_if_version(db, path, 5, ...) and so on.
}

}  // namespace ktune::db::detail
