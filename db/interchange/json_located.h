// A JSON file read for import, with where each value was written, so that a
// bad record is reported at its line and column.
//
// Reading refuses what nlohmann's DOM parser would take silently or badly:
// duplicate keys (its last one wins), numbers out of range (1e999 becomes
// infinity), nesting deeper than kMaxJsonDepth. It is linear in the size of
// the text: objects are filled in document order without a lookup per key
// (nlohmann::ordered_json looks each key up in a list), and locations come
// from one scan of the text's tokens.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/json_value.h"
#include "ktune/error.h"

namespace ktune::db::detail {

constexpr int kMaxJsonDepth = 32;

// Offsets of the tokens a SAX parser reports as events ({ } [ ] keys and
// values; not ',' or ':'), in document order: the n-th event's position.
std::vector<size_t> json_token_offsets(const std::string& text);

class LocatedJson {
 public:
  // Throws Error::bad_input at the damage.
  LocatedJson(const std::string& text, const std::string& source);

  // The parse of `text` when it is well formed. `error` gets the reason
  // otherwise, and `at_end` whether the text was merely cut short (the parser
  // reached its end wanting more), as an interrupted writer leaves it.
  static std::optional<LocatedJson> try_parse(const std::string& text, const std::string& source,
                                              std::optional<Error>& error, bool& at_end);

  const Json& root() const { return root_; }
  // Where a value of root() at depth 3 or less (the root is depth 0) was
  // written: its first character. Deeper values: the source alone.
  SourceLocation where(const Json& value) const;
  // The same, or `fallback` (the enclosing record's) for a value too deep
  // to have its own.
  SourceLocation where(const Json& value, const SourceLocation& fallback) const;
  const std::string& source() const { return source_; }

 private:
  LocatedJson() = default;

  Json root_;
  std::string source_;
  TextLines lines_{""};
  std::vector<std::pair<const Json*, size_t>> offsets_;  // byte offsets, sorted by address
};

// Values as they enter from a results file, checked where they enter.
// A parameter value: a number (finite), bool or string; nullopt otherwise.
std::optional<Value> parameter_value(const Json& j);
// A problem-size extent: an integer (or integral float) in [1, 2^63);
// nullopt otherwise, so a huge one is refused, never wrapped to a negative.
std::optional<int64_t> extent_value(const Json& j);
// A measured time: a finite number >= 0, times `scale`; anything else is
// refused at `where`, naming `what`.
double duration_value(const Json& j, const std::string& what, const SourceLocation& where, double scale = 1);

}  // namespace ktune::db::detail
