// Which of a kernel's parameters a table of configurations shows: those with
// more than one value (in the design space, or else among the rows shown).
// A parameter that is the same in every configuration would only repeat its
// value on each row; it is named once, with its value, above the table.
#pragma once

#include <string>
#include <vector>

#include "search/expr/value.h"

namespace ktune {

class ConfigColumns {
 public:
  // names[i]'s possible values are values[i]; every parameter is shown where
  // none has more than one value.
  ConfigColumns(std::vector<std::string> names, const std::vector<std::vector<Value>>& values);
  // The same, with each parameter's values those it takes in `configs`
  // (each in names' order); every parameter is shown for fewer than 2 rows.
  static ConfigColumns of_rows(std::vector<std::string> names, const std::vector<std::vector<Value>>& configs);

  // "256,2": the shown parameters' values, in names' order; for display, not
  // config_key (search/expr/value.h), which has every parameter's value.
  std::string key(const std::vector<Value>& config) const;
  // Whether the i-th parameter has a column.
  bool shown(size_t i) const { return i >= shown_.size() || shown_[i]; }
  // "block_size_x,items_per_thread": the shown parameters' names.
  std::string names() const;
  // "the same in every configuration, not shown: block_size_y=1, tile=4";
  // empty where every parameter is shown.
  std::string left_out() const;

 private:
  std::vector<std::string> names_;
  std::vector<bool> shown_;
  std::vector<std::string> fixed_values_;  // the value of each parameter not shown
};

}  // namespace ktune
