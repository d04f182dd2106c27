// How a T1 file's keys are matched: T1 is an extensible format and published
// files spell its keys differently from file to file (docs/formats.md),
// so a key is never refused for its spelling or for being unknown; the user
// is told what was read as what and what was left out.
#include <cctype>
#include <set>

#include "tuner/spec/build.h"

namespace ktune::spec_detail {

namespace {

// "kernelSpecification", "Kernel_Specification" and "KernelSpecification" fold alike.
std::string fold(std::string_view key) {
  std::string out;
  for (char c : key)
    if (c != '_' && c != '-' && c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void note_once(Draft& draft, const std::string& context, const std::string& key, const std::string& text) {
  if (draft.t1_noted.insert(context + "\n" + key).second) draft.spec.notes.push_back(text);
}

}  // namespace

Doc t1_map(const Doc& d, std::initializer_list<std::string_view> known, std::initializer_list<T1Alias> aliases,
           std::string_view context, Draft& draft) {
  need_map(d, context);
  Doc out = d;
  out.members.clear();
  const std::string ctx(context);
  // Which known keys the map spells exactly, found once: a map of many
  // unknown keys must not cost a scan of the map per key.
  std::set<std::string_view> written;
  for (const Doc::Member& m : d.members)
    for (auto k : known)
      if (k == m.key) written.insert(k);
  for (const Doc::Member& m : d.members) {
    std::string_view canonical;
    const std::string folded = fold(m.key);
    for (auto k : known)
      if (k == m.key) canonical = k;
    for (auto k : known)
      if (canonical.empty() && fold(k) == folded) canonical = k;
    for (const T1Alias& a : aliases)
      if (canonical.empty() && fold(a.spelling) == folded) canonical = a.key;
    if (canonical.empty()) {
      // An extension is read past; a misspelt key ktune reads would silently
      // lose what it says (a shared memory size, a grid), so that is refused.
      for (auto k : known)
        if (!written.count(k) && folded.size() >= 4 && within_edits(fold(k), folded, 2))
          fail(m.key_where, "unknown key '" + m.key + "' in " + ctx + ": did you mean '" + std::string(k) +
                                "'? (keys T1 does not define are ignored, so a misspelt one would be lost)");
      note_once(draft, ctx, m.key,
                m.key_where.str() + ": '" + m.key + "' in " + ctx + " is not a T1 key ktune reads; ignored");
      continue;
    }
    for (const Doc::Member& seen : out.members)
      if (seen.key == canonical)
        fail(m.key_where, "'" + m.key + "' and '" + std::string(canonical) + "' (line " +
                              std::to_string(seen.key_where.line) + ") both give " + ctx + "." + std::string(canonical));
    if (m.key != canonical)
      note_once(draft, ctx, m.key,
                m.key_where.str() + ": '" + m.key + "' in " + ctx + " read as '" + std::string(canonical) + "'");
    out.members.push_back({std::string(canonical), m.key_where, m.value});
  }
  return out;
}

bool t1_word_is(const std::string& value, std::string_view word) { return fold(value) == fold(word); }

}  // namespace ktune::spec_detail
