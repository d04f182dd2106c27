#include "ktune/error.h"

#include <algorithm>

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

TextLines::TextLines(std::string_view text) : starts_{0}, size_(text.size()) {
  for (size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1)) starts_.push_back(i + 1);
}

SourceLocation TextLines::at(size_t offset, const std::string& file) const {
  offset = std::min(offset, size_);
  const auto line = std::upper_bound(starts_.begin(), starts_.end(), offset) - 1;
  return SourceLocation{file, static_cast<int>(line - starts_.begin()) + 1, static_cast<int>(offset - *line) + 1};
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
