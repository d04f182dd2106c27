// Store: ktune's results database, one SQLite file.
//
// Contract:
// - Opening never damages a file that is not a ktune database: a non-SQLite
//   or foreign SQLite file, or one from a newer schema, is refused with
//   Error::bad_input before anything is written. An older schema is migrated.
//   Opening for writing fails at once (not mid-run) when the file or its
//   directory cannot be written.
// - WAL journal, a busy timeout (default 10 s) and foreign keys. Every
//   add_evaluation() outside a Transaction commits on its own, so a killed
//   process loses at most the evaluation in flight, and several processes can
//   write one file at the same time.
// - Not thread-safe: one Store per thread (each process/thread opens its own).
//
// Evaluations are keyed for resume by (kernel, device, problem size,
// config_key): the text that identifies a configuration (search/expr/value.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/record/record.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ktune::db {

namespace detail {
class Query;
}

struct StoreOptions {
  bool read_only = false;
  // synchronous=FULL: also survive power loss (each commit fsyncs the WAL).
  // The default, NORMAL, survives any process crash, which is what tuning needs.
  bool sync_full = false;
  int busy_timeout_ms = 10000;
};

// Where an evaluation belongs.
struct SeriesIds {
  int64_t kernel_id = 0;
  int64_t device_id = 0;
  int64_t psize_id = 0;
};

// A query over evaluations. Empty/unset members match everything.
struct Filter {
  std::string kernel{};                       // kernel name
  std::string device{};                       // device name
  std::optional<int> compute_capability{};    // e.g. 90 for sm_90
  std::optional<ProblemSize> problem_size{};
  std::optional<Status> status{};
  std::optional<int64_t> run_id{};
  bool outside_runs = false;                // true: only rows that belong to no run
  // false: measurements only; true: rows a replay stored only (tune --simulate).
  // Unset: both. best() honours it by ranking only the rows it keeps.
  std::optional<bool> replayed{};
  enum class Sort { Time, Newest, Id } sort = Sort::Time;  // Time: fastest first, failures last
  int64_t limit = 0;                        // 0 = no limit
};

struct ResultRow {
  int64_t id = 0;
  std::optional<int64_t> run_id{};
  SeriesIds series{};
  std::string kernel{};
  std::string spec_hash{};
  std::vector<std::string> param_names{};
  std::string device{};
  ProblemSize problem_size{};
  std::string config_key{};
  Evaluation eval{};
  bool replayed = false;  // stored by a replay (tune --simulate): recorded data, not measured here
};

struct KernelRow {
  int64_t id = 0;
  KernelInfo info{};
  int64_t evaluations = 0;
};

struct RunRow {
  int64_t id = 0;
  RunInfo info{};
  int64_t evaluations = 0;
};

struct DeviceRow {
  int64_t id = 0;
  DeviceInfo info{};
  int64_t evaluations = 0;
};

// True when `path` starts with SQLite's 16-byte file header (a database file).
bool is_sqlite_file(const std::string& path);

class Store {
 public:
  // Throws Error (see the contract above).
  explicit Store(std::string path, StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  int schema_version();
  // PRAGMA integrity_check's verdict: "ok" when sound.
  std::string integrity_check();

  // Insert-or-update by identity (device: name; kernel: name + spec hash;
  // problem size: canonical extents); return the row id. A device's details
  // are updated with whatever the new record knows.
  int64_t upsert_device(const DeviceInfo& d);
  int64_t upsert_kernel(const KernelInfo& k);
  int64_t upsert_problem_size(const ProblemSize& ps);

  int64_t begin_run(const RunInfo& run);
  void end_run(int64_t run_id, const std::string& ended_at = "");
  // Sets a run's end where it has none or an earlier one (merge: a run copied
  // while it went on, then again once it had finished).
  void end_run_if_later(int64_t run_id, const std::string& ended_at);

  // REQUIRES: e.config has as many values as the kernel has parameters.
  // Returns the evaluation's id.
  int64_t add_evaluation(std::optional<int64_t> run_id, const SeriesIds& where, const Evaluation& e);

  // Adds to a stored evaluation what was measured of it later: its `kind`
  // fields that `e` sets (hardware counters, for `ktune profile`) and its
  // metrics, which are merged into the stored ones. Bad input when no
  // evaluation has that id.
  void add_figures(int64_t evaluation_id, const Evaluation& e, EvaluationField::Kind kind);

  // The latest evaluation of one configuration, for resume and dedup.
  std::optional<Evaluation> find(const SeriesIds& where, const std::string& config_key);
  // Everything measured so far in one series, latest per key, from runs of
  // one kind: a live run resumes from measurements (its own runs' and
  // imports), never from a replay filed under the recorded device's name, and
  // a replay resumes only from replays.
  std::map<std::string, Evaluation> measured(const SeriesIds& where, bool replayed = false);
  // The same, found by the kernel's spec hash, device name and problem size;
  // empty when any of them is not in the store yet.
  std::map<std::string, Evaluation> measured(const std::string& spec_hash, const std::string& device,
                                             const ProblemSize& ps, bool replayed = false);

  std::vector<ResultRow> results(const Filter& f);
  // The fastest ok evaluation per (kernel, device, problem size) matching f
  // (f.status and f.sort are ignored).
  std::vector<ResultRow> best(const Filter& f);
  std::vector<KernelRow> kernels();
  std::vector<DeviceRow> devices();
  // Every run and import, oldest first (by id).
  std::vector<RunRow> runs();
  std::optional<KernelInfo> kernel(int64_t kernel_id);
  // Throws Error::bad_input("unknown kernel X; known: a, b") (likewise for a
  // device) when f names one the store has never seen.
  void require_known(const Filter& f);

  // Groups writes into one commit (import, bulk tools). Rolls back when
  // destroyed without commit(). Not nestable.
  class Transaction {
   public:
    explicit Transaction(Store& s);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

   private:
    Store* s_ = nullptr;
    bool done_ = false;
  };

 private:
  friend class Transaction;
  detail::Query query(const std::string& sql);
  void exec(const char* sql);
  void open(const StoreOptions& options);
  void check_writable_path() const;
  std::vector<ResultRow> select_rows(const std::string& from, const Filter& f, bool with_status);
  size_t kernel_param_count(int64_t kernel_id);

  std::string path_{};
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, sqlite3_stmt*> stmts_;  // prepared once per SQL text
  std::unordered_map<int64_t, size_t> param_counts_{};
  bool in_transaction_ = false;
};

}  // namespace ktune::db
