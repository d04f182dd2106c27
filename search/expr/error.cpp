#include "ktune/error.h"

namespace ktune {

std::string SourceLocation::str() const {
  std::string s = file;
  // Appended piece by piece: `"literal" + std::string` trips GCC 12's false
  // -Wrestrict positive (PR 105329).
  if (line > 0) {
    s.append(s.empty() ? "line " : ":").append(std::to_string(line));
    if (column > 0) s.append(":").append(std::to_string(column));
  } else if (column > 0) {
    s.append(s.empty() ? "column " : ":col ").append(std::to_string(column));
  }
  return s;
}

SourceLocation SourceLocation::at_column(int column_in_text) const {
  SourceLocation l = *this;
  l.column = (column > 0 ? column : 1) + column_in_text - 1;
  return l;
}

static std::string format(const std::string& message, const SourceLocation& where) {
  std::string w = where.str();
  return w.empty() ? message : w + ": " + message;
}

Error::Error(Kind kind, std::string message, SourceLocation where)
    : std::runtime_error(format(message, where)),
      kind_(kind),
      message_(std::move(message)),
      where_(std::move(where)) {}

}  // namespace ktune
