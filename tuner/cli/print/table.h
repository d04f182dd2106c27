// Aligned plain-text tables for command output: a header row, then rows of
// cells; numeric-looking cells are right-aligned. Output is deterministic.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ktune {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t rows() const { return rows_.size(); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point formatting with `digits` decimals ("-" for NaN).
std::string fixed(double v, int digits);

}  // namespace ktune
