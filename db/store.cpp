// Store: opening, schema set-up and writes. Reads are in store_query.cpp.
#include "db/store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "db/json_value.h"
#include "db/schema.h"
#include "db/sqlite_util.h"
#include "ktune/error.h"

namespace ktune::db {

using detail::Query;

namespace {

std::string parent_dir(const std::string& path) {
  std::filesystem::path p = std::filesystem::path(path).parent_path();
  return p.empty() ? "." : p.string();
}

// A non-empty file must start with SQLite's magic before SQLite may open it:
// SQLite itself would happily treat some garbage as a hot journal target.
void require_sqlite_magic(const std::string& path, const struct stat& st) {
  if (st.st_size == 0) return;
  if (!std::ifstream(path, std::ios::binary))
    throw Error::bad_input("cannot read results database " + path + ": " + std::strerror(errno));
  if (!is_sqlite_file(path))
    throw Error::bad_input(path + " is not a SQLite database (not a ktune results database); refusing to touch it");
}

// A read-only reader of a WAL database needs its -shm file, which it cannot
// create in a directory it may not write. When no writer is active there (no
// -wal file), SQLite may read the file as immutable instead.
bool needs_immutable(const std::string& path) {
  struct stat st {};
  return ::access(parent_dir(path).c_str(), W_OK) != 0 && ::stat((path + "-wal").c_str(), &st) != 0;
}

std::string sqlite_uri(const std::string& path, bool immutable) {
  std::string uri = "file:";
  for (char c : std::filesystem::absolute(path).string()) {
    if (c == '?' || c == '#' || c == '%') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return immutable ? uri + "?immutable=1" : uri;
}

}  // namespace

bool is_sqlite_file(const std::string& path) {
  char head[16] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  return in.gcount() == 16 && std::memcmp(head, "SQLite format 3", 16) == 0;
}

Store::Store(std::string path, StoreOptions options) : path_(std::move(path)) {
  try {
    open(options);
  } catch (...) {
    for (auto& [sql, s] : stmts_) sqlite3_finalize(s);
    if (db_) sqlite3_close_v2(db_);
    throw;
  }
}

Store::~Store() {
  for (auto& [sql, s] : stmts_) sqlite3_finalize(s);
  sqlite3_close_v2(db_);
}

void Store::check_writable_path() const {
  std::string dir = parent_dir(path_);
  struct stat st {};
  bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && ::access(path_.c_str(), W_OK) != 0)
    throw Error::bad_input("results database " + path_ + " is read-only (" + std::strerror(errno) +
                           "); ktune needs to write results there");
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error::bad_input("cannot create results database " + path_ + ": directory " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error::bad_input("directory " + dir + " is not writable (" + std::strerror(errno) +
                           "); the results database " + path_ +
                           " needs its -wal and -shm files beside it");
}

void Store::open(const StoreOptions& options) {
  struct stat st {};
  bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) throw Error::bad_input("results database " + path_ + " is not a regular file");
  if (!exists && options.read_only)
    throw Error::bad_input("no results database at " + path_ + " (run `ktune tune` or `ktune import` first)");
  if (exists) require_sqlite_magic(path_, st);
  if (!options.read_only) check_writable_path();

  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI |
              (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  std::string uri = sqlite_uri(path_, options.read_only && needs_immutable(path_));
  if (sqlite3_open_v2(uri.c_str(), &db_, flags, nullptr) != SQLITE_OK)
    detail::throw_sqlite(db_, path_, "cannot open");
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, options.busy_timeout_ms);
  if (!options.read_only && sqlite3_db_readonly(db_, "main") == 1)
    throw Error::bad_input("results database " + path_ + " can only be opened read-only; ktune needs to write there");

  detail::Probe p = detail::probe(db_, path_);  // reads only; throws for foreign or newer files
  // A larger page cache keeps the hot index pages of a big store in memory
  // (the default is 2 MB); temp b-trees for ORDER BY stay in memory too.
  exec("PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 8192");
  if (options.read_only) {
    if (p.empty) throw Error::bad_input(path_ + " is empty, not a ktune results database");
    if (p.version < detail::kSchemaVersion)
      throw Error::bad_input(path_ + " has results schema version " + std::to_string(p.version) +
                             "; open it once with a command that writes (e.g. ktune import) to upgrade it");
    return;
  }
  {
    Query q = query("PRAGMA journal_mode = WAL");
    if (!q.step() || q.text(0) != "wal")
      throw Error::failed("results database " + path_ + ": cannot switch to WAL journal mode");
  }
  exec(options.sync_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
  if (p.version < detail::kSchemaVersion) detail::create_or_migrate(db_, path_);
}

Query Store::query(const std::string& sql) {
  auto it = stmts_.find(sql);
  if (it == stmts_.end()) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK)
      detail::throw_sqlite(db_, path_, "preparing \"" + sql.substr(0, 80) + "\"");
    it = stmts_.emplace(sql, s).first;
  }
  return Query(db_, it->second, &path_);
}

void Store::exec(const char* sql) { detail::exec(db_, path_, sql); }

int Store::schema_version() {
  Query q = query("PRAGMA user_version");
  q.step();
  return static_cast<int>(q.int64(0));
}

std::string Store::integrity_check() {
  Query q = query("PRAGMA integrity_check");
  std::string out;
  while (q.step()) {
    if (!out.empty()) out += '\n';
    out += q.text(0);
  }
  return out;
}

int64_t Store::upsert_device(const DeviceInfo& d) {
  if (d.name.empty()) throw Error::bad_input("a device needs a name");
  Query q = query(
      "INSERT INTO devices(name, cc_major, cc_minor, sm_count, memory_bytes, sm_clock_mhz, memory_clock_mhz,"
      " driver_version, cuda_version, nvrtc_version, uuid, copy_gbs, fp32_gflops)"
      " VALUES (?1, nullif(?2,0), nullif(?3,0), nullif(?4,0), nullif(?5,0), nullif(?6,0), nullif(?7,0),"
      " nullif(?8,''), nullif(?9,''), nullif(?10,''), nullif(?11,''), nullif(?12,0), nullif(?13,0))"
      " ON CONFLICT(name) DO UPDATE SET"
      " cc_major = coalesce(excluded.cc_major, cc_major), cc_minor = coalesce(excluded.cc_minor, cc_minor),"
      " sm_count = coalesce(excluded.sm_count, sm_count), memory_bytes = coalesce(excluded.memory_bytes, memory_bytes),"
      " sm_clock_mhz = coalesce(excluded.sm_clock_mhz, sm_clock_mhz),"
      " memory_clock_mhz = coalesce(excluded.memory_clock_mhz, memory_clock_mhz),"
      " driver_version = coalesce(excluded.driver_version, driver_version),"
      " cuda_version = coalesce(excluded.cuda_version, cuda_version),"
      " nvrtc_version = coalesce(excluded.nvrtc_version, nvrtc_version), uuid = coalesce(excluded.uuid, uuid),"
      " copy_gbs = coalesce(excluded.copy_gbs, copy_gbs), fp32_gflops = coalesce(excluded.fp32_gflops, fp32_gflops)"
      " RETURNING id");
  q.bind(1, d.name).bind(2, d.cc_major).bind(3, d.cc_minor).bind(4, d.sm_count).bind(5, d.memory_bytes);
  q.bind(6, d.sm_clock_mhz).bind(7, d.memory_clock_mhz).bind(8, d.driver_version).bind(9, d.cuda_version);
  q.bind(10, d.nvrtc_version).bind(11, d.uuid).bind(12, d.copy_gbs).bind(13, d.fp32_gflops);
  q.step();
  int64_t id = q.int64(0);
  q.run();
  return id;
}

int64_t Store::upsert_kernel(const KernelInfo& k) {
  if (k.name.empty()) throw Error::bad_input("a kernel needs a name");
  if (k.param_names.size() != k.param_types.size())
    throw Error::bad_input("kernel " + k.name + ": parameter names and types differ in number");
  detail::Json params = detail::Json::array();
  for (size_t i = 0; i < k.param_names.size(); ++i)
    params.push_back({{"name", k.param_names[i]}, {"type", type_name(k.param_types[i])}});
  Query q = query(
      "INSERT INTO kernels(name, source_hash, spec_hash, params) VALUES (?1, ?2, ?3, ?4)"
      " ON CONFLICT(name, spec_hash) DO UPDATE SET source_hash = excluded.source_hash, params = excluded.params"
      " RETURNING id");
  q.bind(1, k.name).bind(2, k.source_hash).bind(3, k.spec_hash).bind(4, params.dump());
  q.step();
  int64_t id = q.int64(0);
  q.run();
  param_counts_[id] = k.param_names.size();
  return id;
}

int64_t Store::upsert_problem_size(const ProblemSize& raw) {
  ProblemSize ps = canonical_problem_size(raw);
  Query q = query(
      "INSERT INTO problem_sizes(key, x, y, z) VALUES (?1, ?2, ?3, ?4)"
      " ON CONFLICT(key) DO UPDATE SET x = excluded.x RETURNING id");
  q.bind(1, problem_size_key(ps));
  for (int i = 0; i < 3; ++i) {
    if (i < static_cast<int>(ps.size()))
      q.bind(2 + i, ps[static_cast<size_t>(i)]);
    else
      q.bind_null(2 + i);
  }
  q.step();
  int64_t id = q.int64(0);
  q.run();
  return id;
}

int64_t Store::begin_run(const RunInfo& r) {
  Query q = query(
      "INSERT INTO runs(strategy, strategy_options, seed, budget, started_at, ended_at, host, ktune_version,"
      " replay, replay_source, imported_from) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id");
  q.bind_text_or_null(1, r.strategy).bind_text_or_null(2, r.strategy_options).bind(3, r.seed);
  q.bind_text_or_null(4, r.budget).bind(5, r.started_at.empty() ? now_iso8601() : r.started_at);
  q.bind_text_or_null(6, r.ended_at).bind_text_or_null(7, r.host).bind_text_or_null(8, r.ktune_version);
  q.bind(9, r.replay ? 1 : 0).bind_text_or_null(10, r.replay_source).bind_text_or_null(11, r.imported_from);
  q.step();
  int64_t id = q.int64(0);
  q.run();
  return id;
}

void Store::end_run(int64_t run_id, const std::string& ended_at) {
  query("UPDATE runs SET ended_at = ?1 WHERE id = ?2")
      .bind(1, ended_at.empty() ? now_iso8601() : ended_at)
      .bind(2, run_id)
      .run();
}

void Store::end_run_if_later(int64_t run_id, const std::string& ended_at) {
  query("UPDATE runs SET ended_at = ?1 WHERE id = ?2 AND (ended_at IS NULL OR ended_at < ?1)")
      .bind(1, ended_at)
      .bind(2, run_id)
      .run();
}

size_t Store::kernel_param_count(int64_t kernel_id) {
  auto it = param_counts_.find(kernel_id);
  if (it != param_counts_.end()) return it->second;
  auto k = kernel(kernel_id);
  if (!k) throw Error::failed("results database " + path_ + ": no kernel with id " + std::to_string(kernel_id));
  return param_counts_[kernel_id] = k->param_names.size();
}

int64_t Store::add_evaluation(std::optional<int64_t> run_id, const SeriesIds& w, const Evaluation& e) {
  size_t n = kernel_param_count(w.kernel_id);
  if (e.config.size() != n)
    throw Error::failed("evaluation has " + std::to_string(e.config.size()) + " parameter values, kernel has " +
                        std::to_string(n));
  // The fixed columns, then one per evaluation_fields() entry.
  static const std::string sql = [] {
    std::string cols =
        "run_id, kernel_id, device_id, psize_id, config_key, config, status, reason, log, time_ms, min_ms, mean_ms,"
        " stddev_ms, sample_count, samples, metrics, timestamp";
    std::string params = "?1";
    int n = 17;
    for (const EvaluationField& f : evaluation_fields()) cols.append(", ").append(f.column);
    n += static_cast<int>(evaluation_fields().size());
    for (int i = 2; i <= n; ++i) params.append(", ?").append(std::to_string(i));
    return "INSERT INTO evaluations(" + cols + ") VALUES (" + params + ")";
  }();
  Query q = query(sql);
  q.bind(1, run_id).bind(2, w.kernel_id).bind(3, w.device_id).bind(4, w.psize_id);
  q.bind(5, config_key(e.config)).bind(6, detail::config_to_json(e.config)).bind(7, to_string(e.status));
  q.bind_text_or_null(8, e.reason).bind_text_or_null(9, e.log);
  q.bind(10, e.time_ms).bind(11, e.min_ms).bind(12, e.mean_ms).bind(13, e.stddev_ms).bind(14, e.sample_count);
  if (e.samples.empty()) q.bind_null(15); else q.bind(15, detail::samples_to_json(e.samples));
  if (e.metrics.empty()) q.bind_null(16); else q.bind(16, detail::metrics_to_json(e.metrics));
  q.bind_text_or_null(17, e.timestamp);
  int column = 18;
  for (const EvaluationField& f : evaluation_fields()) {
    if (f.real) q.bind(column++, e.*f.real);
    else q.bind(column++, e.*f.integer);
  }
  q.run();  // not RETURNING: SQLite buffers RETURNING rows in a temporary table
  return sqlite3_last_insert_rowid(db_);
}

void Store::add_figures(int64_t evaluation_id, const Evaluation& e, EvaluationField::Kind kind) {
  std::map<std::string, double> metrics;
  {
    Query q = query("SELECT metrics FROM evaluations WHERE id = ?1");
    if (!q.bind(1, evaluation_id).step())
      throw Error::bad_input(path_ + ": no evaluation with id " + std::to_string(evaluation_id));
    if (!q.is_null(0)) metrics = detail::metrics_from_json(q.text(0));
  }
  for (const auto& [name, value] : e.metrics) metrics[name] = value;
  std::string sql = "UPDATE evaluations SET metrics = ?1";
  std::vector<double> values;
  for (const EvaluationField& f : evaluation_fields()) {
    if (f.kind != kind) continue;
    if (std::optional<double> v = f.get(e)) {
      values.push_back(*v);
      sql.append(", ").append(f.column).append(" = ?").append(std::to_string(values.size() + 2));
    }
  }
  Query q = query(sql + " WHERE id = ?2");
  if (metrics.empty()) q.bind_null(1); else q.bind(1, detail::metrics_to_json(metrics));
  q.bind(2, evaluation_id);
  for (size_t i = 0; i < values.size(); ++i) q.bind(static_cast<int>(i) + 3, values[i]);
  q.run();
}

Store::Transaction::Transaction(Store& s) : s_(&s) {
  if (s.in_transaction_) throw Error::failed("results database " + s.path_ + ": transactions do not nest");
  s.exec("BEGIN IMMEDIATE");
  s.in_transaction_ = true;
}

Store::Transaction::~Transaction() {
  if (!done_) {
    sqlite3_exec(s_->db_, "ROLLBACK", nullptr, nullptr, nullptr);
    s_->in_transaction_ = false;
  }
}

void Store::Transaction::commit() {
  s_->exec("COMMIT");
  done_ = true;
  s_->in_transaction_ = false;
}

}  // namespace ktune::db
