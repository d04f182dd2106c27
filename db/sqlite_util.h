// Internal to ktune_db: a thin layer over SQLite's C API.
//
// Query wraps a prepared statement that the Store owns and caches; it binds
// parameters by position (1-based), steps, reads columns, and on destruction
// resets the statement so the cache can hand it out again. Every SQLite failure
// becomes ktune::Error::failed naming the database file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ktune::db::detail {

[[noreturn]] void throw_sqlite(sqlite3* db, const std::string& path, const std::string& what);

// Runs SQL text that returns no rows (several statements allowed).
void exec(sqlite3* db, const std::string& path, const char* sql);

class Query {
 public:
  Query(sqlite3* db, sqlite3_stmt* stmt, const std::string* path) : db_(db), s_(stmt), path_(path) {}
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }

  Query& bind(int i, int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
  Query& bind(int i, int v) { return check(sqlite3_bind_int64(s_, i, v)); }
  Query& bind(int i, double v) { return check(sqlite3_bind_double(s_, i, v)); }
  Query& bind(int i, std::string_view v) {
    return check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Query& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Query& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Query& bind_null(int i) { return check(sqlite3_bind_null(s_, i)); }
  template <class T>
  Query& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  // Empty text binds NULL: for optional text columns.
  Query& bind_text_or_null(int i, const std::string& v) { return v.empty() ? bind_null(i) : bind(i, v); }

  // True while a row is available; false when done.
  bool step();
  // Steps once, expecting completion (INSERT/UPDATE/DELETE).
  void run();

  bool is_null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  int64_t int64(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  std::string text(int c) const {
    auto p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, c))) : std::string();
  }
  std::optional<int64_t> opt_int64(int c) const { return is_null(c) ? std::nullopt : std::optional(int64(c)); }
  std::optional<double> opt_real(int c) const { return is_null(c) ? std::nullopt : std::optional(real(c)); }

 private:
  Query& check(int rc);
  sqlite3* db_;
  sqlite3_stmt* s_;
  const std::string* path_;
};

}  // namespace ktune::db::detail
