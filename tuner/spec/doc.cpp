// Positioned documents: YAML through yaml-cpp (which keeps marks), JSON through
// nlohmann's SAX parser (which keeps none: a small token scan of the raw text
// supplies the offset of each SAX event, since both run in document order).
#include "tuner/spec/doc.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

namespace ktune::spec_detail {

const Doc* Doc::find(std::string_view key) const {
  for (const auto& m : members)
    if (m.key == key) return &m.value;
  return nullptr;
}

SourceLocation Doc::key_location(std::string_view key) const {
  for (const auto& m : members)
    if (m.key == key) return m.key_where;
  return where;
}

const char* kind_name(Doc::Kind k) {
  switch (k) {
    case Doc::Kind::Null: return "null";
    case Doc::Kind::Bool: return "a bool";
    case Doc::Kind::Int: return "an integer";
    case Doc::Kind::Float: return "a float";
    case Doc::Kind::String: return "a string";
    case Doc::Kind::List: return "a list";
    case Doc::Kind::Map: return "a map";
  }
  return "?";
}

SourceLocation location_of(const std::string& text, size_t offset, const std::string& file) {
  SourceLocation l{file, 1, 1};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++l.line;
      l.column = 1;
    } else {
      ++l.column;
    }
  }
  return l;
}

void fail(const SourceLocation& where, const std::string& message) { throw Error::bad_input(message, where); }

// ---------------------------------------------------------------- YAML

namespace {

// YAML 1.2 core schema for plain scalars; anything else is a string.
Doc yaml_plain_scalar(const std::string& s) {
  static const std::regex int_re("[-+]?[0-9]+");
  static const std::regex float_re("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  Doc d;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return d;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    d.kind = Doc::Kind::Bool;
    d.scalar = Value(s[0] == 't' || s[0] == 'T');
  } else if (std::regex_match(s, int_re)) {
    errno = 0;
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE) {
      d.kind = Doc::Kind::String;  // an integer too large: let the reader complain about its type
      d.scalar = Value(s);
    } else {
      d.kind = Doc::Kind::Int;
      d.scalar = Value(int64_t{v});
    }
  } else if (std::regex_match(s, float_re)) {
    d.kind = Doc::Kind::Float;
    d.scalar = Value(std::strtod(s.c_str(), nullptr));
  } else if (s == ".inf" || s == "+.inf" || s == ".Inf" || s == "-.inf" || s == "-.Inf") {
    d.kind = Doc::Kind::Float;
    d.scalar = Value(s[0] == '-' ? -INFINITY : INFINITY);
  } else if (s == ".nan" || s == ".NaN") {
    d.kind = Doc::Kind::Float;
    d.scalar = Value(NAN);
  } else {
    d.kind = Doc::Kind::String;
    d.scalar = Value(s);
  }
  return d;
}

SourceLocation yaml_where(const YAML::Mark& m, const std::string& file) {
  return SourceLocation{file, m.line + 1, m.column + 1};
}

Doc from_yaml(const YAML::Node& n, const std::string& file) {
  Doc d;
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      if (n.Tag() == "!") {  // quoted or block scalar: a string, never a number
        d.kind = Doc::Kind::String;
        d.scalar = Value(n.Scalar());
        d.quoted = true;
        d.where = yaml_where(n.Mark(), file);
        d.where.column += 1;  // past the opening quote
        return d;
      }
      d = yaml_plain_scalar(n.Scalar());
      break;
    case YAML::NodeType::Sequence:
      d.kind = Doc::Kind::List;
      for (const auto& item : n) d.items.push_back(from_yaml(item, file));
      break;
    case YAML::NodeType::Map: {
      d.kind = Doc::Kind::Map;
      for (auto it = n.begin(); it != n.end(); ++it) {
        SourceLocation kw = yaml_where(it->first.Mark(), file);
        if (!it->first.IsScalar()) fail(kw, "a map key must be a plain name");
        std::string key = it->first.Scalar();
        if (d.find(key)) fail(kw, "duplicate key '" + key + "' (first at line " +
                                      std::to_string(d.key_location(key).line) + ")");
        d.members.push_back({key, kw, from_yaml(it->second, file)});
      }
      break;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  d.where = yaml_where(n.Mark(), file);
  return d;
}

}  // namespace

Doc parse_yaml(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail(yaml_where(e.mark, file), "malformed YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    fail(yaml_where(e.mark, file), "malformed YAML: " + e.msg);
  }
  Doc d = from_yaml(root, file);
  if (!d.is_map()) fail(SourceLocation{file, 1, 1}, "a spec must be a YAML map of keys, not " +
                                                         std::string(kind_name(d.kind)));
  return d;
}

// ---------------------------------------------------------------- JSON

namespace {

// Offsets of the tokens nlohmann reports as SAX events ({ } [ ] keys and
// values; not ',' or ':'), in document order.
std::vector<size_t> json_event_offsets(const std::string& t) {
  std::vector<size_t> out;
  size_t i = (t.size() >= 3 && t.compare(0, 3, "\xEF\xBB\xBF") == 0) ? 3 : 0;
  while (i < t.size()) {
    char c = t[i];
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

class JsonBuilder {
 public:
  JsonBuilder(const std::string& text, const std::string& file)
      : text_(text), file_(file), offsets_(json_event_offsets(text)) {}

  Doc root;

  bool null() { return put(Doc{}); }
  bool boolean(bool v) { return put(scalar(Doc::Kind::Bool, Value(v))); }
  bool number_integer(int64_t v) { return put(scalar(Doc::Kind::Int, Value(v))); }
  bool number_unsigned(uint64_t v) {
    if (v > uint64_t(INT64_MAX)) return put(scalar(Doc::Kind::Float, Value(double(v))));
    return put(scalar(Doc::Kind::Int, Value(int64_t(v))));
  }
  bool number_float(double v, const std::string&) { return put(scalar(Doc::Kind::Float, Value(v))); }
  bool string(std::string& s) {
    Doc d = scalar(Doc::Kind::String, Value(s));
    d.where.column += 1;  // the content starts after the quote
    return put(std::move(d));
  }
  bool binary(nlohmann::json::binary_t&) { return put(Doc{}); }
  bool start_object(size_t) { return open(Doc::Kind::Map); }
  bool start_array(size_t) { return open(Doc::Kind::List); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    SourceLocation kw = next_where();
    Doc& map = *stack_.back();
    if (map.find(k)) fail(kw, "duplicate key \"" + k + "\" (first at line " + std::to_string(map.key_location(k).line) + ")");
    pending_key_ = k;
    pending_key_where_ = kw;
    return true;
  }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    std::string msg = ex.what();
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: why".
    if (auto p = msg.find(": "); p != std::string::npos) msg = msg.substr(p + 2);
    fail(location_of(text_, position > 0 ? position - 1 : 0, file_), "malformed JSON: " + msg);
  }

 private:
  SourceLocation next_where() {
    size_t off = event_ < offsets_.size() ? offsets_[event_] : text_.size();
    ++event_;
    return location_of(text_, off, file_);
  }
  Doc scalar(Doc::Kind k, Value v) {
    Doc d;
    d.kind = k;
    d.scalar = std::move(v);
    d.where = next_where();
    return d;
  }
  // Adds a finished value to the container being built (or makes it the root).
  Doc* attach(Doc d) {
    if (stack_.empty()) {
      root = std::move(d);
      return &root;
    }
    Doc& top = *stack_.back();
    if (top.is_list()) {
      top.items.push_back(std::move(d));
      return &top.items.back();
    }
    top.members.push_back({pending_key_, pending_key_where_, std::move(d)});
    return &top.members.back().value;
  }
  bool put(Doc d) {
    attach(std::move(d));
    return true;
  }
  bool open(Doc::Kind k) {
    Doc d;
    d.kind = k;
    d.where = next_where();
    stack_.push_back(attach(std::move(d)));
    return true;
  }
  bool close() {
    next_where();
    stack_.pop_back();
    return true;
  }

  const std::string& text_;
  const std::string& file_;
  std::vector<size_t> offsets_;
  size_t event_ = 0;
  // Pointers stay valid: a container's children vector only grows while it is
  // the innermost open container, and its parent is not touched meanwhile.
  std::vector<Doc*> stack_;
  std::string pending_key_;
  SourceLocation pending_key_where_;
};

}  // namespace

Doc parse_json(const std::string& text, const std::string& file) {
  JsonBuilder b(text, file);
  nlohmann::json::sax_parse(text, &b);
  if (!b.root.is_map()) fail(SourceLocation{file, 1, 1}, "a T1 file must be a JSON object, not " +
                                                              std::string(kind_name(b.root.kind)));
  return std::move(b.root);
}

}  // namespace ktune::spec_detail
