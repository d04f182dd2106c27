// Store: reads (resume look-ups, results, best, listings).
#include <algorithm>
#include <set>
#include <tuple>

#include "db/json_value.h"
#include "db/sqlite_util.h"
#include "db/store.h"
#include "ktune/error.h"

namespace ktune::db {

using detail::Query;

namespace {

// Whether an evaluation row was stored by a replay (its run says so; rows
// without a run are measurements).
#define KTUNE_ROW_REPLAYED "COALESCE((SELECT rr.replay FROM runs rr WHERE rr.id = e.run_id), 0)"

// Columns of every evaluation row read back: kFixedColumns (read_row() reads
// them by these indices), then one per evaluation_fields() entry.
constexpr int kFieldsFrom = 24;
const std::string& row_columns() {
  static const std::string sql = [] {
    std::string s =
        "SELECT e.id, e.run_id, e.kernel_id, e.device_id, e.psize_id, e.config_key, e.config, e.status, e.reason,"
        " e.log, e.time_ms, e.min_ms, e.mean_ms, e.stddev_ms, e.sample_count, e.samples, e.metrics, e.timestamp,"
        " k.name, k.spec_hash, k.params, d.name, p.key, " KTUNE_ROW_REPLAYED;
    for (const EvaluationField& f : evaluation_fields()) s.append(", e.").append(f.column);
    return s;
  }();
  return sql;
}

constexpr const char* kJoins =
    " JOIN kernels k ON k.id = e.kernel_id JOIN devices d ON d.id = e.device_id"
    " JOIN problem_sizes p ON p.id = e.psize_id";

ProblemSize parse_problem_size_key(const std::string& key) {
  ProblemSize ps;
  int64_t cur = 0;
  bool any = false;
  for (char c : key) {
    if (c >= '0' && c <= '9') {
      cur = cur * 10 + (c - '0');
      any = true;
    } else if ((c == ',' || c == ']') && any) {
      ps.push_back(cur);
      cur = 0;
      any = false;
    }
  }
  return ps;
}

void parse_params(const std::string& text, KernelInfo& k) {
  detail::Json a = detail::Json::parse(text, nullptr, false);
  if (!a.is_array()) return;
  for (const auto& p : a) {
    k.param_names.push_back(p.value("name", ""));
    k.param_types.push_back(detail::value_type_from_name(p.value("type", "str")).value_or(ValueType::String));
  }
}

// Kernel parameter lists parsed once per query, not once per row.
struct ParamCache {
  std::map<int64_t, KernelInfo> kernels;
  const KernelInfo& get(int64_t id, const std::string& params_json) {
    auto it = kernels.find(id);
    if (it != kernels.end()) return it->second;
    KernelInfo k;
    parse_params(params_json, k);
    return kernels.emplace(id, std::move(k)).first->second;
  }
};

ResultRow read_row(const Query& q, ParamCache& cache) {
  ResultRow r;
  r.id = q.int64(0);
  r.run_id = q.opt_int64(1);
  r.series = {q.int64(2), q.int64(3), q.int64(4)};
  r.config_key = q.text(5);
  const KernelInfo& k = cache.get(r.series.kernel_id, q.text(20));
  Evaluation& e = r.eval;
  e.config = detail::config_from_json(q.text(6));
  for (size_t i = 0; i < e.config.size() && i < k.param_types.size(); ++i)
    e.config[i] = detail::coerce(e.config[i], k.param_types[i]);
  e.status = status_from_string(q.text(7)).value_or(Status::RuntimeError);
  e.reason = q.text(8);
  e.log = q.text(9);
  e.time_ms = q.opt_real(10);
  e.min_ms = q.opt_real(11);
  e.mean_ms = q.opt_real(12);
  e.stddev_ms = q.opt_real(13);
  e.sample_count = q.int64(14);
  e.samples = detail::samples_from_json(q.text(15));
  e.metrics = detail::metrics_from_json(q.text(16));
  e.timestamp = q.text(17);
  r.kernel = q.text(18);
  r.spec_hash = q.text(19);
  r.param_names = k.param_names;
  r.device = q.text(21);
  r.problem_size = parse_problem_size_key(q.text(22));
  r.replayed = q.int64(23) != 0;
  int column = kFieldsFrom;
  for (const EvaluationField& f : evaluation_fields()) {
    if (f.real) e.*f.real = q.opt_real(column++);
    else e.*f.integer = q.opt_int64(column++);
  }
  return r;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s.empty() ? "(none)" : s;
}

}  // namespace

std::optional<KernelInfo> Store::kernel(int64_t kernel_id) {
  Query q = query("SELECT name, source_hash, spec_hash, params FROM kernels WHERE id = ?1");
  q.bind(1, kernel_id);
  if (!q.step()) return std::nullopt;
  KernelInfo k;
  k.name = q.text(0);
  k.source_hash = q.text(1);
  k.spec_hash = q.text(2);
  parse_params(q.text(3), k);
  return k;
}

std::optional<Evaluation> Store::find(const SeriesIds& w, const std::string& key) {
  Query q = query(row_columns() + " FROM evaluations e" + kJoins +
                  " WHERE e.kernel_id = ?1 AND e.device_id = ?2 AND e.psize_id = ?3 AND e.config_key = ?4"
                  " ORDER BY e.id DESC LIMIT 1");
  q.bind(1, w.kernel_id).bind(2, w.device_id).bind(3, w.psize_id).bind(4, key);
  if (!q.step()) return std::nullopt;
  ParamCache cache;
  return read_row(q, cache).eval;
}

std::map<std::string, Evaluation> Store::measured(const SeriesIds& w, bool replayed) {
  Query q = query(row_columns() + " FROM evaluations e" + kJoins +
                  " WHERE e.kernel_id = ?1 AND e.device_id = ?2 AND e.psize_id = ?3 AND " KTUNE_ROW_REPLAYED " = ?4"
                  " ORDER BY e.id");
  q.bind(1, w.kernel_id).bind(2, w.device_id).bind(3, w.psize_id).bind(4, replayed ? 1 : 0);
  std::map<std::string, Evaluation> out;
  ParamCache cache;
  while (q.step()) {
    ResultRow r = read_row(q, cache);
    out[r.config_key] = std::move(r.eval);  // later rows win: the latest measurement
  }
  return out;
}

std::map<std::string, Evaluation> Store::measured(const std::string& spec_hash, const std::string& device,
                                                  const ProblemSize& ps, bool replayed) {
  SeriesIds w;
  {
    Query q = query("SELECT id FROM kernels WHERE spec_hash = ?1 ORDER BY id DESC LIMIT 1");
    if (!q.bind(1, spec_hash).step()) return {};
    w.kernel_id = q.int64(0);
  }
  {
    Query q = query("SELECT id FROM devices WHERE name = ?1");
    if (!q.bind(1, device).step()) return {};
    w.device_id = q.int64(0);
  }
  {
    Query q = query("SELECT id FROM problem_sizes WHERE key = ?1");
    if (!q.bind(1, problem_size_key(canonical_problem_size(ps))).step()) return {};
    w.psize_id = q.int64(0);
  }
  return measured(w, replayed);
}

// Builds the WHERE clause from the filter's set members only, so each shape
// of query is its own cached statement that can use the indexes.
std::vector<ResultRow> Store::select_rows(const std::string& from, const Filter& f, bool with_status) {
  std::string sql = row_columns() + " FROM " + from + kJoins + " WHERE 1";
  if (!f.kernel.empty()) sql += " AND k.name = ?1";
  if (!f.device.empty()) sql += " AND d.name = ?2";
  // A minor of 0 is stored as NULL ("unknown"), so sm_90 is major 9 with any NULL minor.
  if (f.compute_capability) sql += " AND d.cc_major * 10 + COALESCE(d.cc_minor, 0) = ?3";
  if (f.problem_size) sql += " AND p.key = ?4";
  if (with_status && f.status) sql += " AND e.status = ?5";
  if (f.run_id) sql += " AND e.run_id = ?6";
  if (f.outside_runs) sql += " AND e.run_id IS NULL";
  if (f.replayed) sql += " AND " KTUNE_ROW_REPLAYED " = ?8";
  if (!with_status)
    sql += " ORDER BY k.name, d.name, p.key";
  else if (f.sort == Filter::Sort::Time)
    sql += " ORDER BY e.status <> 'ok', e.time_ms IS NULL, e.time_ms, e.id";
  else
    sql += f.sort == Filter::Sort::Newest ? " ORDER BY e.id DESC" : " ORDER BY e.id";
  if (f.limit > 0) sql += " LIMIT ?7";

  Query q = query(sql);
  if (!f.kernel.empty()) q.bind(1, f.kernel);
  if (!f.device.empty()) q.bind(2, f.device);
  if (f.compute_capability) q.bind(3, *f.compute_capability);
  if (f.problem_size) q.bind(4, problem_size_key(canonical_problem_size(*f.problem_size)));
  if (with_status && f.status) q.bind(5, to_string(*f.status));
  if (f.run_id) q.bind(6, *f.run_id);
  if (f.limit > 0) q.bind(7, f.limit);
  if (f.replayed) q.bind(8, int64_t{*f.replayed ? 1 : 0});
  std::vector<ResultRow> rows;
  ParamCache cache;
  while (q.step()) rows.push_back(read_row(q, cache));
  return rows;
}

std::vector<ResultRow> Store::results(const Filter& f) { return select_rows("evaluations e", f, true); }

std::vector<ResultRow> Store::best(const Filter& f) {
  if (!f.replayed) return select_rows("best e", f, false);
  // The view ranks replayed and measured rows together: rank the kept ones here.
  Filter ok = f;
  ok.status = Status::Ok;
  ok.sort = Filter::Sort::Time;
  ok.limit = 0;
  std::vector<ResultRow> out;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (ResultRow& r : select_rows("evaluations e", ok, true))
    if (r.eval.time_ms && seen.insert({r.series.kernel_id, r.series.device_id, r.series.psize_id}).second)
      out.push_back(std::move(r));
  std::sort(out.begin(), out.end(), [](const ResultRow& a, const ResultRow& b) {
    const std::string ka = problem_size_key(a.problem_size), kb = problem_size_key(b.problem_size);
    return std::tie(a.kernel, a.device, ka) < std::tie(b.kernel, b.device, kb);
  });
  return out;
}

std::vector<KernelRow> Store::kernels() {
  Query q = query(
      "SELECT k.id, k.name, k.source_hash, k.spec_hash, k.params,"
      " (SELECT count(*) FROM evaluations e WHERE e.kernel_id = k.id) FROM kernels k ORDER BY k.name, k.id");
  std::vector<KernelRow> out;
  while (q.step()) {
    KernelRow r;
    r.id = q.int64(0);
    r.info.name = q.text(1);
    r.info.source_hash = q.text(2);
    r.info.spec_hash = q.text(3);
    parse_params(q.text(4), r.info);
    r.evaluations = q.int64(5);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<DeviceRow> Store::devices() {
  Query q = query(
      "SELECT d.id, d.name, d.cc_major, d.cc_minor, d.sm_count, d.memory_bytes, d.sm_clock_mhz,"
      " d.memory_clock_mhz, d.driver_version, d.cuda_version, d.nvrtc_version, d.uuid, coalesce(c.n, 0),"
      " coalesce(d.copy_gbs, 0), coalesce(d.fp32_gflops, 0)"
      " FROM devices d LEFT JOIN (SELECT device_id, count(*) AS n FROM evaluations GROUP BY device_id) c"
      " ON c.device_id = d.id ORDER BY d.name");
  std::vector<DeviceRow> out;
  while (q.step()) {
    DeviceRow r;
    r.id = q.int64(0);
    DeviceInfo& d = r.info;
    d.name = q.text(1);
    d.cc_major = static_cast<int>(q.int64(2));
    d.cc_minor = static_cast<int>(q.int64(3));
    d.sm_count = static_cast<int>(q.int64(4));
    d.memory_bytes = q.int64(5);
    d.sm_clock_mhz = static_cast<int>(q.int64(6));
    d.memory_clock_mhz = static_cast<int>(q.int64(7));
    d.driver_version = q.text(8);
    d.cuda_version = q.text(9);
    d.nvrtc_version = q.text(10);
    d.uuid = q.text(11);
    r.evaluations = q.int64(12);
    d.copy_gbs = q.real(13);
    d.fp32_gflops = q.real(14);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RunRow> Store::runs() {
  Query q = query(
      "SELECT r.id, r.strategy, r.strategy_options, r.seed, r.budget, r.started_at, r.ended_at, r.host,"
      " r.ktune_version, r.replay, r.replay_source, r.imported_from, coalesce(c.n, 0)"
      " FROM runs r LEFT JOIN (SELECT run_id, count(*) AS n FROM evaluations GROUP BY run_id) c"
      " ON c.run_id = r.id ORDER BY r.id");
  std::vector<RunRow> out;
  while (q.step()) {
    RunRow r;
    r.id = q.int64(0);
    RunInfo& i = r.info;
    i.strategy = q.text(1);
    i.strategy_options = q.text(2);
    i.seed = q.opt_int64(3);
    i.budget = q.text(4);
    i.started_at = q.text(5);
    i.ended_at = q.text(6);
    i.host = q.text(7);
    i.ktune_version = q.text(8);
    i.replay = q.int64(9) != 0;
    i.replay_source = q.text(10);
    i.imported_from = q.text(11);
    r.evaluations = q.int64(12);
    out.push_back(std::move(r));
  }
  return out;
}

void Store::require_known(const Filter& f) {
  if (!f.kernel.empty()) {
    std::vector<std::string> names;
    for (const auto& k : kernels())
      if (names.empty() || names.back() != k.info.name) names.push_back(k.info.name);
    if (std::find(names.begin(), names.end(), f.kernel) == names.end())
      throw Error::bad_input("unknown kernel " + f.kernel + " in " + path_ + "; known: " + joined(names));
  }
  if (!f.device.empty()) {
    Query q = query("SELECT name FROM devices ORDER BY name");
    std::vector<std::string> names;
    while (q.step()) names.push_back(q.text(0));
    if (std::find(names.begin(), names.end(), f.device) == names.end())
      throw Error::bad_input("unknown device " + f.device + " in " + path_ + "; known: " + joined(names));
  }
}

}  // namespace ktune::db

#undef KTUNE_ROW_REPLAYED
