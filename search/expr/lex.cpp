#include "search/expr/lex.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace ktune::expr {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }
bool is_ident_char(char c) { return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

}  // namespace

std::vector<Token> Lexer::run() {
  std::vector<Token> out;
  while (true) {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    Token& t = out.emplace_back();  // built in place: tokens are never copied
    t.col = column(pos_);
    if (pos_ >= text_.size()) return out;
    char c = text_[pos_];
    size_t start = pos_;
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos_ + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
      lex_number(t);
    } else if (c == '\'' || c == '"') {
      lex_string(t);
    } else if (is_ident_start(c)) {
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
      t.kind = Tok::Name;
    } else {
      lex_operator(t);
    }
    t.text = text_.substr(start, pos_ - start);
  }
}

int Lexer::column(size_t pos) const {
  pos = std::min(pos, text_.size());
  if (pos < counted_pos_) counted_pos_ = 0, counted_col_ = 1;
  for (; counted_pos_ < pos; ++counted_pos_)
    if ((static_cast<unsigned char>(text_[counted_pos_]) & 0xC0) != 0x80) ++counted_col_;
  return counted_col_;
}

void Lexer::fail(const std::string& message, size_t pos) const {
  throw Error::bad_input(message, where_.at_column(column(pos)));
}

size_t Lexer::digits(size_t p, int base) const {
  auto ok = [&](char ch) {
    if (base == 16) return std::isxdigit(static_cast<unsigned char>(ch)) != 0;
    return ch >= '0' && ch < static_cast<char>('0' + base);
  };
  while (p < text_.size() && (ok(text_[p]) || (text_[p] == '_' && p + 1 < text_.size() && ok(text_[p + 1])))) ++p;
  return p;
}

void Lexer::lex_number(Token& t) {
  size_t start = pos_;
  int base = 10;
  if (text_[pos_] == '0' && pos_ + 1 < text_.size()) {
    char p = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_ + 1])));
    base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 10;
  }
  bool is_float = false;
  if (base != 10) {
    pos_ = digits(pos_ + 2, base);
    if (pos_ == start + 2) fail("invalid number literal", start);
  } else {
    pos_ = digits(pos_, 10);
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      pos_ = digits(pos_ + 1, 10);
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t e = pos_ + 1;
      if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
      size_t end = digits(e, 10);
      if (end == e) fail("invalid number literal", start);
      is_float = true;
      pos_ = end;
    }
  }
  if (pos_ < text_.size() && (text_[pos_] == 'j' || text_[pos_] == 'J'))
    fail("complex numbers are not supported", start);
  if (pos_ < text_.size() && is_ident_char(text_[pos_])) fail("invalid number literal", start);
  std::string clean;
  for (char ch : text_.substr(start, pos_ - start))
    if (ch != '_') clean += ch;
  if (is_float) {
    t.kind = Tok::Float;
    t.value = Value(std::strtod(clean.c_str(), nullptr));  // inf/0 on overflow, as Python
    return;
  }
  if (base == 10 && clean.size() > 1 && clean[0] == '0' && clean.find_first_not_of('0') != std::string::npos)
    fail("leading zeros in a decimal integer literal are not allowed (use 0o for octal)", start);
  const char* first = clean.data() + (base == 10 ? 0 : 2);
  int64_t v = 0;
  auto res = std::from_chars(first, clean.data() + clean.size(), v, base);
  if (res.ec != std::errc()) fail("integer literal too large (ktune ints are 64-bit)", start);
  t.kind = Tok::Int;
  t.value = Value(v);
}

void Lexer::lex_string(Token& t) {
  size_t start = pos_;
  char quote = text_[pos_++];
  std::string s;
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n') fail("unterminated string", start);
    char c = text_[pos_++];
    if (c == quote) break;
    if (c != '\\') {
      s += c;
      continue;
    }
    if (pos_ >= text_.size()) fail("unterminated string", start);
    char e = text_[pos_++];
    switch (e) {
      case 'n': s += '\n'; break;
      case 't': s += '\t'; break;
      case 'r': s += '\r'; break;
      case '0': s += '\0'; break;
      case '\\': case '\'': case '"': s += e; break;
      case 'x': {
        int v = 0;
        if (pos_ + 2 > text_.size() ||
            std::from_chars(text_.data() + pos_, text_.data() + pos_ + 2, v, 16).ptr != text_.data() + pos_ + 2)
          fail("invalid \\x escape", pos_ - 2);
        s += utf8_encode(static_cast<uint32_t>(v));  // Python's '\xb1' is the character U+00B1
        pos_ += 2;
        break;
      }
      default: s += '\\'; s += e;  // Python keeps unknown escapes as written
    }
  }
  t.kind = Tok::Str;
  t.value = Value(std::move(s));
}

void Lexer::lex_operator(Token& t) {
  static const char* const ops[] = {"**", "//", "<=", ">=", "==", "!=", "+", "-", "*", "/", "%", "<",
                                    ">", "(", ")", "[", "]", ",", ".", "=", ":"};
  for (const char* op : ops) {
    std::string_view o(op);
    if (text_.substr(pos_, o.size()) == o) {
      pos_ += o.size();
      t.kind = Tok::Op;
      return;
    }
  }
  size_t len = 1;
  while (pos_ + len < text_.size() && (static_cast<unsigned char>(text_[pos_ + len]) & 0xC0) == 0x80) ++len;
  fail("unexpected character '" + std::string(text_.substr(pos_, len)) + "'", pos_);
}

}  // namespace ktune::expr
