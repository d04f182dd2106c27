#include "search/error.h"

namespace ktune {

std::string SourceLocation::str() const {
  std::string s = file;
  if (line > 0) {
    s += (s.empty() ? "line " : ":") + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
  } else if (column > 0) {
    s += (s.empty() ? "column " : ":col ") + std::to_string(column);
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
