#include "db/interchange/json_located.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_set>

namespace ktune::db::detail {

std::vector<size_t> json_token_offsets(const std::string& t) {
  std::vector<size_t> out;
  size_t i = (t.size() >= 3 && t.compare(0, 3, "\xEF\xBB\xBF") == 0) ? 3 : 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':') {
      ++i;
    } else if (c == '{' || c == '}' || c == '[' || c == ']') {
      out.push_back(i++);
    } else if (c == '"') {
      out.push_back(i++);
      while (i < t.size() && t[i] != '"') i += (t[i] == '\\') ? 2 : 1;
      ++i;
    } else {
      out.push_back(i);
      while (i < t.size() && std::string_view(" \t\r\n,:]}").find(t[i]) == std::string_view::npos) ++i;
    }
  }
  return out;
}

namespace {

constexpr int kLocatedDepth = 3;  // values this deep or shallower keep their offset

// Builds the DOM from nlohmann's SAX events. Objects are filled with
// emplace_back (ordered_json's own insertion searches the keys, quadratic in
// a cache of many records); duplicate keys are found through a set per open
// object instead.
class Builder {
 public:
  Builder(const std::string& text, const std::string& source)
      : text_(text), source_(source), lines_(text), events_(json_token_offsets(text)) {}

  Json root;
  std::vector<size_t> offsets;  // of each value at depth <= kLocatedDepth, in document order
  std::optional<Error> error;
  bool at_end = false;

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(int64_t v) { return put(Json(v)); }
  bool number_unsigned(uint64_t v) { return put(Json(v)); }
  bool number_float(double v, const std::string& text) {
    if (!std::isfinite(v)) return refuse(event_, "number " + text + " is out of range");
    return put(Json(v));
  }
  bool string(std::string& s) { return put(Json(std::move(s))); }
  bool binary(Json::binary_t&) { return refuse(event_, "binary values are not JSON text"); }
  bool start_object(size_t) { return open(Json::object()); }
  bool start_array(size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    const size_t at = event_++;
    if (!keys_.back().insert(k).second) return refuse(at, "duplicate key \"" + k + "\" (a key may appear once in an object)");
    key_ = std::move(k);
    return true;
  }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: why"
    // or "[json.exception.out_of_range.406] why": the location is ktune's to give.
    std::string msg = ex.what();
    if (msg.starts_with("[json.exception.") && msg.find("] ") != std::string::npos) msg.erase(0, msg.find("] ") + 2);
    if (msg.starts_with("parse error") && msg.find(": ") != std::string::npos) msg.erase(0, msg.find(": ") + 2);
    size_t last = text_.find_last_not_of(" \t\r\n");
    at_end = last == std::string::npos || position > last;
    error = Error::bad_input("invalid JSON: " + msg, lines_.at(position > 0 ? position - 1 : 0, source_));
    return false;
  }

 private:
  bool refuse(size_t event, const std::string& why) {
    error = Error::bad_input(why, lines_.at(event < events_.size() ? events_[event] : text_.size(), source_));
    return false;
  }
  // Adds a value to the innermost open container (or makes it the root).
  Json* attach(Json v) {
    if (stack_.size() <= kLocatedDepth) offsets.push_back(event_ < events_.size() ? events_[event_] : text_.size());
    ++event_;
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      auto& a = top.get_ref<Json::array_t&>();
      a.push_back(std::move(v));
      return &a.back();
    }
    auto& o = top.get_ref<Json::object_t&>();
    o.Container::emplace_back(std::move(key_), std::move(v));
    return &o.back().second;
  }
  bool put(Json v) {
    attach(std::move(v));
    return true;
  }
  bool open(Json v) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth)
      return refuse(event_, "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
    // Pointers stay valid: a container only grows while it is the innermost
    // open one, and its parent is not touched meanwhile.
    stack_.push_back(attach(std::move(v)));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    ++event_;
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  const std::string& text_;
  const std::string& source_;
  TextLines lines_;
  std::vector<size_t> events_;
  size_t event_ = 0;
  std::vector<Json*> stack_;
  std::vector<std::unordered_set<std::string>> keys_;  // per open container
  std::string key_;
};

// Pairs each value at depth <= kLocatedDepth with its offset: the DOM, walked
// in document order, meets them in the order the builder recorded them.
void collect(const Json& j, int depth, const std::vector<size_t>& offsets, size_t& next,
             std::vector<std::pair<const Json*, size_t>>& out) {
  if (depth > kLocatedDepth) return;
  if (next < offsets.size()) out.emplace_back(&j, offsets[next]);
  ++next;
  if (j.is_object()) {
    for (const auto& member : j.get_ref<const Json::object_t&>()) collect(member.second, depth + 1, offsets, next, out);
  } else if (j.is_array()) {
    for (const Json& x : j) collect(x, depth + 1, offsets, next, out);
  }
}

}  // namespace

std::optional<LocatedJson> LocatedJson::try_parse(const std::string& text, const std::string& source,
                                                  std::optional<Error>& error, bool& at_end) {
  Builder b(text, source);
  const bool ok = Json::sax_parse(text, &b);
  at_end = b.at_end;
  if (!ok || b.error) {
    error = b.error ? *b.error : Error::bad_input("invalid JSON", SourceLocation{source});
    return std::nullopt;
  }
  LocatedJson j;
  j.root_ = std::move(b.root);
  j.source_ = source;
  j.lines_ = TextLines(text);
  size_t next = 0;
  collect(j.root_, 0, b.offsets, next, j.offsets_);
  std::sort(j.offsets_.begin(), j.offsets_.end());
  return j;
}

LocatedJson::LocatedJson(const std::string& text, const std::string& source) {
  std::optional<Error> error;
  bool at_end = false;
  std::optional<LocatedJson> j = try_parse(text, source, error, at_end);
  if (!j) throw *error;
  *this = std::move(*j);
}

SourceLocation LocatedJson::where(const Json& value) const {
  auto it = std::lower_bound(offsets_.begin(), offsets_.end(), std::make_pair(&value, size_t{0}));
  if (it == offsets_.end() || it->first != &value) return SourceLocation{source_};
  return lines_.at(it->second, source_);
}

SourceLocation LocatedJson::where(const Json& value, const SourceLocation& fallback) const {
  SourceLocation w = where(value);
  return w.line > 0 ? w : fallback;
}

std::optional<Value> parameter_value(const Json& j) {
  std::optional<Value> v;
  if (j.is_boolean() || j.is_string() || j.is_number_integer()) v = value_from_json(j);
  if (j.is_number_unsigned() && j.get<uint64_t>() <= uint64_t(INT64_MAX)) v = value_from_json(j);
  if (j.is_number_float() && std::isfinite(j.get<double>())) v = value_from_json(j);
  return v;
}

std::optional<int64_t> extent_value(const Json& j) {
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u >= 1 && u <= uint64_t(INT64_MAX)) return static_cast<int64_t>(u);
  } else if (j.is_number_integer()) {
    if (j.get<int64_t>() >= 1) return j.get<int64_t>();
  } else if (j.is_number_float()) {
    const double d = j.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && d >= 1 && d < 9.2e18) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

double duration_value(const Json& j, const std::string& what, const SourceLocation& where, double scale) {
  if (!j.is_number()) throw Error::bad_input(what + " must be a number, not " + j.dump(), where);
  const double v = j.get<double>() * scale;
  if (!std::isfinite(v) || v < 0)
    throw Error::bad_input(what + " = " + j.dump() + " is not a time (a finite number, at least 0)", where);
  return v;
}

}  // namespace ktune::db::detail
