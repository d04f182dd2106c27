#include "tuner/spec/kernel_signature.h"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace ktune {

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The source with comments, string and character literals blanked out, so
// that nothing inside them is read as code. Offsets are kept.
std::string code_only(std::string_view src) {
  std::string out(src);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      size_t end = out.find("*/", i + 2);
      end = end == std::string::npos ? out.size() : end + 2;
      for (; i < end; ++i)
        if (out[i] != '\n') out[i] = ' ';
      --i;
    } else if (out[i] == '"' || out[i] == '\'') {
      const char quote = out[i];
      for (++i; i < out.size() && out[i] != quote && out[i] != '\n'; ++i) {
        if (out[i] == '\\' && i + 1 < out.size()) out[i++] = ' ';
        out[i] = ' ';
      }
    }
  }
  return out;
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (!ident_char(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && ident_char(text[j])) ++j;
    out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

int scalar_width(const std::string& type) {
  static const std::pair<std::string_view, int> widths[] = {
      {"char", 1},          {"signed char", 1},        {"unsigned char", 1},   {"bool", 1},
      {"int8_t", 1},        {"uint8_t", 1},            {"short", 2},           {"unsigned short", 2},
      {"int16_t", 2},       {"uint16_t", 2},           {"half", 2},            {"__half", 2},
      {"__nv_bfloat16", 2}, {"int", 4},                {"unsigned", 4},        {"unsigned int", 4},
      {"signed", 4},        {"int32_t", 4},            {"uint32_t", 4},        {"float", 4},
      {"half2", 4},         {"__half2", 4},            {"long", 8},            {"unsigned long", 8},
      {"long long", 8},     {"unsigned long long", 8}, {"int64_t", 8},         {"uint64_t", 8},
      {"size_t", 8},        {"double", 8},             {"float2", 8},          {"int2", 8},
      {"float4", 16},       {"int4", 16},              {"double2", 16},        {"float3", 12},
      {"int3", 12}};
  for (const auto& [name, w] : widths)
    if (name == type) return w;
  return 0;
}

KernelParam read_param(std::string text) {
  KernelParam p;
  if (size_t eq = text.find('='); eq != std::string::npos) text.resize(eq);  // a default argument
  p.text = text;
  while (!p.text.empty() && std::isspace(static_cast<unsigned char>(p.text.back()))) p.text.pop_back();
  while (!p.text.empty() && std::isspace(static_cast<unsigned char>(p.text.front()))) p.text.erase(0, 1);
  p.pointer = text.find('*') != std::string::npos || text.find('[') != std::string::npos;
  std::string before = text.substr(0, std::min(text.find('*'), text.find('[')));
  static const std::string_view qualifiers[] = {"const", "volatile", "__restrict__", "__restrict", "restrict",
                                                "struct", "__grid_constant__", "typename"};
  std::vector<std::string> kept;
  for (std::string& w : words(before)) {
    bool qualifier = false;
    for (std::string_view q : qualifiers) qualifier = qualifier || q == w;
    if (!qualifier) kept.push_back(std::move(w));
  }
  // A by-value parameter's last word is its name, unless the type stands alone.
  if (!p.pointer && kept.size() > 1 && !scalar_width(kept.back())) kept.pop_back();
  std::string type;
  for (const std::string& w : kept) {
    if (!type.empty()) type += ' ';
    type += w;
  }
  if (type.rfind("std ", 0) == 0) type.erase(0, 4);  // std::size_t read as words
  if (type == "unsigned long int") type = "unsigned long";
  p.type = type;
  p.known_type = scalar_width(type) > 0;
  if (!p.pointer) p.width = scalar_width(type);
  return p;
}

// The parameter texts between `open` (a '(') and its matching ')'.
std::optional<std::vector<std::string>> parameter_texts(const std::string& code, size_t open) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (size_t i = open + 1; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0) {
      --depth;
      current += c;
      continue;
    }
    if (c == ')' && depth == 0) {
      if (!words(current).empty()) out.push_back(current);
      return out;
    }
    if (c == ',' && depth == 0) {
      out.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<KernelParam>> kernel_parameters(std::string_view source, std::string_view name) {
  const std::string code = code_only(source);
  for (size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    if ((at > 0 && ident_char(code[at - 1])) || (at + name.size() < code.size() && ident_char(code[at + name.size()])))
      continue;
    size_t open = code.find_first_not_of(" \t\r\n", at + name.size());
    if (open == std::string::npos || code[open] != '(') continue;
    // The declaration starts after the previous statement or block (a
    // directive may sit inside it: #if ... __launch_bounds__ ... #endif).
    const size_t start = code.find_last_of(";{}", at);
    const std::string head = code.substr(start == std::string::npos ? 0 : start + 1, at - (start == std::string::npos ? 0 : start + 1));
    bool global = false;
    for (const std::string& w : words(head)) global = global || w == "__global__";
    if (!global) continue;
    auto texts = parameter_texts(code, open);
    if (!texts) return std::nullopt;
    std::vector<KernelParam> params;
    for (const std::string& t : *texts) {
      if (words(t).size() == 1 && words(t)[0] == "void") continue;  // k(void)
      params.push_back(read_param(t));
    }
    return params;
  }
  return std::nullopt;
}

namespace {

void append_headers(const std::string& text, const std::filesystem::path& dir, std::set<std::filesystem::path>& seen,
                    std::string& out) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line[hash] != '#' || line.find("include", hash) == std::string::npos) continue;
    const size_t open = line.find('"'), close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close == std::string::npos) continue;
    std::error_code ec;
    const std::filesystem::path header = std::filesystem::weakly_canonical(dir / line.substr(open + 1, close - open - 1), ec);
    if (ec || !std::filesystem::is_regular_file(header, ec) || !seen.insert(header).second) continue;
    std::ifstream in(header, std::ios::binary);
    std::ostringstream body;
    body << in.rdbuf();
    out += "\n;\n" + body.str();
    append_headers(body.str(), header.parent_path(), seen, out);
  }
}

}  // namespace

std::string with_local_headers(const std::string& source, const std::filesystem::path& dir) {
  std::string out = source;
  std::set<std::filesystem::path> seen;
  append_headers(source, dir, seen, out);
  return out;
}

bool source_mentions(std::string_view source, std::string_view name) {
  for (const std::string& w : words(code_only(source)))
    if (w == name) return true;
  return false;
}

}  // namespace ktune
