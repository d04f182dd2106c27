#include "db/sqlite_util.h"

#include "ktune/error.h"

namespace ktune::db::detail {

void throw_sqlite(sqlite3* db, const std::string& path, const std::string& what) {
  std::string msg = "results database " + path + ": " + what;
  if (db) {
    msg += ": ";
    msg += sqlite3_errmsg(db);
    int code = sqlite3_extended_errcode(db);
    if ((code & 0xff) == SQLITE_BUSY)
      msg += " (another process held the database longer than the busy timeout)";
    if ((code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB)
      msg += " (the file is damaged or not a ktune database)";
  }
  throw Error::failed(msg);
}

void exec(sqlite3* db, const std::string& path, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    sqlite3_free(err);  // sqlite3_errmsg still holds the same text
    throw_sqlite(db, path, std::string("executing \"") + std::string(sql).substr(0, 60) + "...\"");
  }
}

bool Query::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite(db_, *path_, std::string("executing \"") + sqlite3_sql(s_) + "\"");
}

void Query::run() {
  while (step()) {
  }
}

Query& Query::check(int rc) {
  if (rc != SQLITE_OK) throw_sqlite(db_, *path_, "binding a parameter");
  return *this;
}

}  // namespace ktune::db::detail
