// The tokenizer of the Python expression subset: numbers (decimal, hex,
// octal, binary, float, with underscores), quoted strings with Python's
// escapes, names and operators, each with its 1-based column. parse.cpp's
// parser reads its tokens.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "search/expr/ast.h"

namespace ktune::expr {

enum class Tok { End, Int, Float, Str, Name, Op };

struct Token {
  Tok kind = Tok::End;
  std::string_view text;
  int col = 0;
  Value value;  // Int, Float, Str
};

class Lexer {
 public:
  Lexer(std::string_view text, const SourceLocation& where) : text_(text), where_(where) {}
  // The tokens of the whole text, ending with Tok::End.
  std::vector<Token> run();
  // 1-based column of byte offset `pos`, counting UTF-8 characters. Tokens
  // ask in increasing order, so counting on from the last answer keeps
  // lexing linear in the length of the text.
  int column(size_t pos) const;

 private:
  [[noreturn]] void fail(const std::string& message, size_t pos) const;
  size_t digits(size_t p, int base) const;
  void lex_number(Token& t);
  void lex_string(Token& t);
  void lex_operator(Token& t);

  std::string_view text_;
  const SourceLocation& where_;
  size_t pos_ = 0;
  mutable size_t counted_pos_ = 0;  // column() memo: byte offset...
  mutable int counted_col_ = 1;     // ...and its column
};

}  // namespace ktune::expr
