// The first-level key of the cubin cache (compile_cache_key, compiler.h):
// the request and every local header its source includes, hashed.
#include <algorithm>
#include <set>

#include "tuner/base/sha256.h"
#include "tuner/compile/compile_parts.h"
#include "tuner/compile/compiler.h"

namespace ktune {
namespace fs = std::filesystem;
using namespace compile_detail;
namespace {

// Bump when the meaning of a cache entry changes (fields, options ktune adds).
constexpr std::string_view kKeySchema = "ktune-compile-key 1";

struct IncludeDirective {
  std::string name;
  bool quoted = false;  // "x.h" (searched from the including file's folder first) vs <x.h>
};

// #include directives of a file, whatever #if surrounds them: hashing a header
// that is not compiled in only costs a spurious miss, never a wrong hit.
std::vector<IncludeDirective> include_directives(std::string_view text) {
  std::vector<IncludeDirective> out;
  while (!text.empty()) {
    std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(std::min(text.size(), line.size() + 1));
    std::size_t at = line.find_first_not_of(" \t");
    if (at == std::string_view::npos || line[at] != '#') continue;
    at = line.find_first_not_of(" \t", at + 1);
    if (at == std::string_view::npos || line.substr(at, 7) != "include") continue;
    at = line.find_first_not_of(" \t", at + 7);
    if (at == std::string_view::npos || (line[at] != '"' && line[at] != '<')) continue;
    char close = line[at] == '"' ? '"' : '>';
    std::size_t end = line.find(close, at + 1);
    if (end == std::string_view::npos) continue;
    out.push_back({std::string(line.substr(at + 1, end - at - 1)), close == '"'});
  }
  return out;
}

// Hashes the headers `text` includes that exist under `including_dir` (quoted
// includes only) or `search`, recursively, each once. Headers found nowhere
// there are the toolkit's or NVRTC's own: NVRTC's version stands for them.
void hash_headers(Sha256& h, std::string_view text, const fs::path& including_dir,
                  const std::vector<fs::path>& search, std::set<fs::path>& seen) {
  for (const IncludeDirective& inc : include_directives(text)) {
    std::vector<fs::path> candidates;
    if (inc.quoted && !including_dir.empty()) candidates.push_back(including_dir / inc.name);
    for (const fs::path& dir : search) candidates.push_back(dir / inc.name);
    for (const fs::path& candidate : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(candidate, ec)) continue;
      fs::path canonical = fs::weakly_canonical(candidate, ec);
      if (!seen.insert(canonical).second) break;
      std::optional<std::string> contents = slurp(candidate);
      if (!contents) break;
      h.update_field(inc.name);
      h.update_field(*contents);
      hash_headers(h, *contents, candidate.parent_path(), search, seen);
      break;
    }
  }
}

}  // namespace

std::string compile_cache_key(const CompileRequest& request, const std::string& source) {
  Sha256 h;
  h.update_field(kKeySchema);
  h.update_field(Compiler::nvrtc_version());
  h.update_field(request.name_expression());
  std::vector<std::string> opts = portable_options(request);
  h.update_field(std::to_string(opts.size()));
  for (const std::string& o : opts) h.update_field(o);
  h.update_field(source);
  if (request.compiler != "nvrtc") {  // NVRTC's keys stay as they were
    h.update_field(request.compiler);
    h.update_field(nvcc_version());
  }
  for (const auto& [include, text] : nvrtc_headers()) {
    h.update_field(std::string(include));
    h.update_field(std::string(text));
  }
  std::set<fs::path> seen;
  hash_headers(h, source, source_dir(request), search_dirs(request), seen);
  return Sha256::hex(h.digest());
}

}  // namespace ktune
