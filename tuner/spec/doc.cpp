// Positioned documents: YAML through yaml-cpp (which keeps marks), JSON through
// nlohmann's SAX parser (which keeps none: a small token scan of the raw text
// supplies the offset of each SAX event, since both run in document order).
#include "tuner/spec/doc.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>


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

// Matchers for the YAML 1.2 core schema's numbers, written out: std::regex
// recurses once per character and overflows the stack on a long scalar.
size_t digits_from(const std::string& s, size_t i) {
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i;
}
size_t sign_from(const std::string& s, size_t i) { return i < s.size() && (s[i] == '-' || s[i] == '+') ? i + 1 : i; }

// [-+]?[0-9]+
bool is_core_int(const std::string& s) {
  const size_t start = sign_from(s, 0), end = digits_from(s, start);
  return end > start && end == s.size();
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_core_float(const std::string& s) {
  size_t i = sign_from(s, 0);
  const size_t whole = digits_from(s, i);
  if (whole > i) {
    i = whole;
    if (i < s.size() && s[i] == '.') i = digits_from(s, i + 1);
  } else {
    if (i >= s.size() || s[i] != '.') return false;
    const size_t frac = digits_from(s, i + 1);
    if (frac == i + 1) return false;
    i = frac;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    const size_t exp = sign_from(s, i + 1), end = digits_from(s, exp);
    if (end == exp) return false;
    i = end;
  }
  return i == s.size();
}

// YAML 1.2 core schema for plain scalars; anything else is a string.
Doc yaml_plain_scalar(const std::string& s) {
  Doc d;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return d;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    d.kind = Doc::Kind::Bool;
    d.scalar = Value(s[0] == 't' || s[0] == 'T');
  } else if (is_core_int(s)) {
    errno = 0;
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE) {
      d.kind = Doc::Kind::String;  // an integer too large: let the reader complain about its type
      d.scalar = Value(s);
    } else {
      d.kind = Doc::Kind::Int;
      d.scalar = Value(int64_t{v});
    }
  } else if (is_core_float(s)) {
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

// What a document may hold (kMaxDocValues, kMaxDocText), counted as it is
// read; an alias is counted in full each time it is used.
class DocBudget {
 public:
  DocBudget(std::string file, bool yaml) : file_(std::move(file)), yaml_(yaml) {}
  void value(const SourceLocation& where) {
    if (++values_ > kMaxDocValues)
      fail(where, "the document holds more than " + std::to_string(kMaxDocValues) + " values" + aliases() +
                      ": far more than any spec needs");
  }
  void text(size_t bytes, const SourceLocation& where) {
    if ((text_ += bytes) > kMaxDocText)
      fail(where, "the document holds more than " + std::to_string(kMaxDocText >> 20) + " MiB of text" + aliases() +
                      ": far more than any spec needs");
  }
  void depth(int d, const SourceLocation& where) {
    if (d > kMaxDocDepth)
      fail(where, "the document nests more than " + std::to_string(kMaxDocDepth) + " levels deep");
  }
  const std::string& file() const { return file_; }

 private:
  std::string aliases() const { return yaml_ ? " (aliases counted each time they are used)" : ""; }

  std::string file_;
  bool yaml_;
  size_t values_ = 0, text_ = 0;
};

Doc from_yaml(const YAML::Node& n, DocBudget& budget, int depth) {
  const std::string& file = budget.file();
  Doc d;
  budget.value(yaml_where(n.Mark(), file));
  budget.depth(depth, yaml_where(n.Mark(), file));
  if (n.Type() == YAML::NodeType::Scalar) {
    budget.text(n.Scalar().size(), yaml_where(n.Mark(), file));
    if (invalid_utf8(n.Scalar())) fail(yaml_where(n.Mark(), file), "not UTF-8 text (a byte that is no character)");
  }
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
      for (const auto& item : n) d.items.push_back(from_yaml(item, budget, depth + 1));
      break;
    case YAML::NodeType::Map: {
      d.kind = Doc::Kind::Map;
      std::unordered_map<std::string, size_t> seen;  // key -> member index: linear in the map's size
      for (auto it = n.begin(); it != n.end(); ++it) {
        SourceLocation kw = yaml_where(it->first.Mark(), file);
        if (!it->first.IsScalar()) fail(kw, "a map key must be a plain name");
        std::string key = it->first.Scalar();
        budget.text(key.size(), kw);
        if (invalid_utf8(key)) fail(kw, "not UTF-8 text (a byte that is no character)");
        if (auto [at, fresh] = seen.emplace(key, d.members.size()); !fresh)
          fail(kw, "duplicate key '" + key + "' (first at line " + std::to_string(d.members[at->second].key_where.line) +
                       ")");
        d.members.push_back({key, kw, from_yaml(it->second, budget, depth + 1)});
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

// Where the document that starts at byte `start` was opened: the last '---'
// line before it, else `start` itself.
SourceLocation document_marker(const std::string& text, size_t start, const std::string& file) {
  size_t at = std::string::npos;
  for (size_t line = 0; line < text.size() && line < start;) {
    if (text.compare(line, 3, "---") == 0 &&
        (line + 3 == text.size() || std::isspace(static_cast<unsigned char>(text[line + 3]))))
      at = line;
    const size_t nl = text.find('\n', line);
    if (nl == std::string::npos) break;
    line = nl + 1;
  }
  return location_of(text, at == std::string::npos ? start : at, file);
}

// Where each document of a YAML stream starts, from the parser's events alone
// (no nodes are built).
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

[[noreturn]] void malformed(const YAML::Exception& e, const std::string& file) {
  if (dynamic_cast<const YAML::DeepRecursion*>(&e))  // yaml-cpp's own guard, deeper than ours
    fail(yaml_where(e.mark, file), "the document nests more than " + std::to_string(kMaxDocDepth) + " levels deep");
  fail(yaml_where(e.mark, file), "malformed YAML: " + e.msg);
}

}  // namespace

Doc parse_yaml(const std::string& text, const std::string& file) {
  // YAML is Unicode text without control characters; yaml-cpp checks neither
  // (a NUL makes it read the rest as another encoding), and a stray byte would
  // reach every JSON the spec's strings go into (the store, --json, exports).
  if (auto bad = invalid_utf8(text)) fail(location_of(text, *bad, file), "not UTF-8 text (a byte that is no character)");
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      char code[8];
      std::snprintf(code, sizeof code, "%02X", c);
      fail(location_of(text, i, file), std::string("a control character (U+00") + code + ") is not YAML text");
    }
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    malformed(e, file);
  }
  DocBudget budget(file, true);
  Doc d = from_yaml(root, budget, 0);
  if (!d.is_map()) fail(SourceLocation{file, 1, 1}, "a spec must be a YAML map of keys, not " +
                                                         std::string(kind_name(d.kind)));
  // yaml-cpp reads only the first of several documents: what follows a
  // second '---' would be silently ignored. The parser is asked for one
  // document more, never for all of them: on some damaged text it finds
  // empty documents without end (YAML::LoadAll then never returns).
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  try {
    parser.HandleNextDocument(starts);
    if (parser.HandleNextDocument(starts) && starts.starts.size() > 1) {
      const int64_t start = starts.starts[1].pos;
      fail(document_marker(text, start >= 0 ? size_t(start) : text.size(), file),
           "a second YAML document starts here; a spec is one document (remove the '---' line or split the file)");
    }
  } catch (const YAML::Exception& e) {
    malformed(e, file);
  }
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
      : text_(text), file_(file), lines_(text), offsets_(json_event_offsets(text)), budget_(file, false) {}

  Doc root;

  bool null() { return put(scalar(Doc::Kind::Null, Value())); }
  bool boolean(bool v) { return put(scalar(Doc::Kind::Bool, Value(v))); }
  bool number_integer(int64_t v) { return put(scalar(Doc::Kind::Int, Value(v))); }
  bool number_unsigned(uint64_t v) {
    if (v > uint64_t(INT64_MAX)) return put(scalar(Doc::Kind::Float, Value(double(v))));
    return put(scalar(Doc::Kind::Int, Value(int64_t(v))));
  }
  bool number_float(double v, const std::string&) { return put(scalar(Doc::Kind::Float, Value(v))); }
  bool string(std::string& s) {
    Doc d = scalar(Doc::Kind::String, Value(s));
    budget_.text(s.size(), d.where);
    d.where.column += 1;  // the content starts after the quote
    return put(std::move(d));
  }
  bool binary(nlohmann::json::binary_t&) { return put(scalar(Doc::Kind::Null, Value())); }
  bool start_object(size_t) { return open(Doc::Kind::Map); }
  bool start_array(size_t) { return open(Doc::Kind::List); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    SourceLocation kw = next_where();
    budget_.text(k.size(), kw);
    if (auto [at, fresh] = keys_.back().emplace(k, kw.line); !fresh)
      fail(kw, "duplicate key \"" + k + "\" (first at line " + std::to_string(at->second) + ")");
    pending_key_ = k;
    pending_key_where_ = kw;
    return true;
  }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: why"
    // or "[json.exception.out_of_range.406] why": the location is ktune's to give.
    std::string msg = ex.what();
    if (msg.starts_with("[json.exception.") && msg.find("] ") != std::string::npos) msg.erase(0, msg.find("] ") + 2);
    if (msg.starts_with("parse error") && msg.find(": ") != std::string::npos) msg.erase(0, msg.find(": ") + 2);
    fail(lines_.at(position > 0 ? position - 1 : 0, file_), "malformed JSON: " + msg);
  }

 private:
  SourceLocation next_where() {
    size_t off = event_ < offsets_.size() ? offsets_[event_] : text_.size();
    ++event_;
    return lines_.at(off, file_);
  }
  Doc scalar(Doc::Kind k, Value v) {
    Doc d;
    d.kind = k;
    d.scalar = std::move(v);
    d.where = next_where();
    budget_.value(d.where);
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
    budget_.value(d.where);
    budget_.depth(static_cast<int>(stack_.size()) + 1, d.where);
    stack_.push_back(attach(std::move(d)));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    next_where();
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  const std::string& text_;
  const std::string& file_;
  TextLines lines_;
  std::vector<size_t> offsets_;
  DocBudget budget_;
  std::vector<std::unordered_map<std::string, int>> keys_;  // per open container: its keys and their lines
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
