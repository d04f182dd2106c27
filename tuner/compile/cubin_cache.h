// A content-addressed on-disk cache of compilation results.
//
// Each entry is one file, <dir>/<key[0:2]>/<key>.kcubin, holding the cubin and
// what is needed to use it without recompiling: ok flag, lowered name, NVRTC
// log and resource usage, followed by a SHA-256 of the whole record. Writers
// write a temporary file and rename it into place, so readers in other
// threads or processes see either nothing or a whole entry; an entry that does
// not verify (torn, truncated, edited, other key) is treated as a miss and is
// overwritten by the next store(). Nothing here throws: a cache that cannot be
// read or written only costs recompilation.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "tuner/compile/cubin_info.h"

namespace ktune {

struct CacheEntry {
  bool ok = false;
  std::string cubin;
  std::string lowered_name;
  std::string log;
  KernelResources resources;
  double nvrtc_ms = 0;  // what the original compilation cost

  bool operator==(const CacheEntry&) const = default;
};

class CubinCache {
 public:
  explicit CubinCache(std::filesystem::path dir);

  // $KTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ktune, else $HOME/.cache/ktune
  // (else a ktune folder in the system temporary directory).
  static std::filesystem::path default_dir();

  // REQUIRES: key is 64 lowercase hex digits (a SHA-256).
  std::optional<CacheEntry> load(const std::string& key) const;
  // Returns false (and leaves no partial file) when the entry could not be written.
  bool store(const std::string& key, const CacheEntry& entry) const;

  // Claims on keys let processes that are about to compile the same thing at
  // once (two configurations with the same code, on two compile workers)
  // compile it once: claim() creates <entry>.claim holding this host and
  // process and returns true, or returns false when another live claim
  // exists. A claim whose process has died (a crashed or killed compile
  // worker) or that is older than an hour is abandoned: claim() takes it over.
  bool claim(const std::string& key) const;
  void release(const std::string& key) const;
  // Waits while `key` is claimed by someone else, polling: returns the entry
  // once it is stored, or nullopt when the claim goes away without one (a
  // failure not worth caching) or after max_wait_s.
  std::optional<CacheEntry> wait_for(const std::string& key, double max_wait_s) const;

  std::filesystem::path path_of(const std::string& key) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace ktune
