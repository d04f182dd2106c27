// ktune's one error style.
//
// ktune::Error is thrown for anything the *user* got wrong (a spec, an option,
// a file) or for work that ran and failed as a whole. It carries where the
// problem is (file, line, column) and the process exit status the command line
// maps it to: 2 for bad input, 1 for failed work. A single configuration that
// fails to compile or run is NOT an Error: that is data (see db/record.h).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ktune {

// Where a piece of user input came from. line and column are 1-based; 0 = unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  // "file:line:col" with the unknown parts left out ("" when nothing is known).
  std::string str() const;
  // This location shifted by an offset inside an expression string found at
  // this place (column of the string's first character + offset).
  SourceLocation at_column(int column_in_text) const;
};

// Line and column (1-based; the column counts bytes) of byte offsets in one
// text: the line starts are found once, then each lookup is a binary search,
// so locating every token of a large file stays linear.
class TextLines {
 public:
  explicit TextLines(std::string_view text);
  // An offset past the end is the end.
  SourceLocation at(size_t offset, const std::string& file) const;

 private:
  std::vector<size_t> starts_;
  size_t size_ = 0;
};

class Error : public std::runtime_error {
 public:
  enum class Kind { BadInput, Failed };

  Error(Kind kind, std::string message, SourceLocation where = {});

  static Error bad_input(std::string message, SourceLocation where = {}) {
    return Error(Kind::BadInput, std::move(message), std::move(where));
  }
  static Error failed(std::string message, SourceLocation where = {}) {
    return Error(Kind::Failed, std::move(message), std::move(where));
  }

  Kind kind() const { return kind_; }
  const SourceLocation& where() const { return where_; }
  const std::string& message() const { return message_; }
  // 2 for bad input, 1 for failed work.
  int exit_status() const { return kind_ == Kind::BadInput ? 2 : 1; }

 private:
  Kind kind_;
  std::string message_;
  SourceLocation where_;
};

}  // namespace ktune
