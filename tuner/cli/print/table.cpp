#include "tuner/cli/print/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ktune {

static bool numeric(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

void Table::print(std::ostream& out) const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& r : rows_)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r, bool is_header) {
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < r.size() ? r[c] : "";
      const std::string pad(width[c] - std::min(width[c], cell.size()), ' ');
      if (c) out << "  ";
      if (!is_header && numeric(cell)) out << pad << cell;
      else if (c + 1 == width.size()) out << cell;
      else out << cell << pad;
    }
    out << '\n';
  };
  line(header_, true);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
  for (const auto& r : rows_) line(r, false);
}

std::string fixed(double v, int digits) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace ktune
