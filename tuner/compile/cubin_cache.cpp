#include "tuner/compile/cubin_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string_view>
#include <system_error>

#include "tuner/base/sha256.h"

namespace ktune {
namespace {

constexpr std::string_view kMagic = "ktune-cubin 1\n";
constexpr std::string_view kDigestTag = "sha256 ";

void put_field(std::string& out, std::string_view name, std::string_view bytes) {
  out.append(name).append(" ").append(std::to_string(bytes.size())).append("\n");
  out.append(bytes).append("\n");
}

// Reads "name <len>\n<bytes>\n" at `at`; false on any mismatch.
bool get_field(std::string_view in, std::size_t& at, std::string_view name, std::string_view& bytes) {
  std::size_t eol = in.find('\n', at);
  if (eol == std::string_view::npos) return false;
  std::string_view head = in.substr(at, eol - at);
  if (!head.starts_with(name) || head.size() <= name.size() || head[name.size()] != ' ') return false;
  std::string_view digits = head.substr(name.size() + 1);
  std::size_t len = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || len > in.size()) return false;
    len = len * 10 + static_cast<std::size_t>(c - '0');
  }
  if (digits.empty() || len > in.size() - eol - 1 || eol + 1 + len >= in.size() || in[eol + 1 + len] != '\n') {
    return false;
  }
  bytes = in.substr(eol + 1, len);
  at = eol + 2 + len;
  return true;
}

std::string encode_resources(const KernelResources& r) {
  std::ostringstream s;
  s << r.registers << ' ' << r.static_smem << ' ' << r.local_bytes << ' ' << r.stack_bytes << ' '
    << r.const_bytes << ' ' << r.param_bytes << ' ' << r.spill_store_bytes << ' ' << r.spill_load_bytes
    << ' ' << r.launch_bound_threads << ' ' << r.max_registers << ' ' << r.max_threads_per_block;
  return s.str();
}

bool decode_resources(std::string_view text, KernelResources& r) {
  std::istringstream s{std::string(text)};
  s >> r.registers >> r.static_smem >> r.local_bytes >> r.stack_bytes >> r.const_bytes >> r.param_bytes >>
      r.spill_store_bytes >> r.spill_load_bytes >> r.launch_bound_threads >> r.max_registers >>
      r.max_threads_per_block;
  return !s.fail();
}

std::string encode(const std::string& key, const CacheEntry& e) {
  std::string out(kMagic);
  put_field(out, "key", key);
  put_field(out, "ok", e.ok ? "1" : "0");
  put_field(out, "lowered", e.lowered_name);
  put_field(out, "resources", encode_resources(e.resources));
  put_field(out, "nvrtc_ms", std::to_string(e.nvrtc_ms));
  put_field(out, "log", e.log);
  put_field(out, "cubin", e.cubin);
  std::string digest = Sha256::hex_of(out);
  out.append(kDigestTag).append(digest).append("\n");
  return out;
}

std::optional<CacheEntry> decode(const std::string& key, std::string_view in) {
  std::size_t digest_at = in.rfind(kDigestTag);
  if (!in.starts_with(kMagic) || digest_at == std::string_view::npos ||
      in.substr(digest_at + kDigestTag.size()) != Sha256::hex_of(in.substr(0, digest_at)) + "\n") {
    return std::nullopt;
  }
  std::string_view body = in.substr(0, digest_at);
  std::size_t at = kMagic.size();
  std::string_view stored_key, ok, lowered, resources, ms, log, cubin;
  if (!get_field(body, at, "key", stored_key) || stored_key != key || !get_field(body, at, "ok", ok) ||
      !get_field(body, at, "lowered", lowered) || !get_field(body, at, "resources", resources) ||
      !get_field(body, at, "nvrtc_ms", ms) || !get_field(body, at, "log", log) ||
      !get_field(body, at, "cubin", cubin)) {
    return std::nullopt;
  }
  CacheEntry e;
  e.ok = ok == "1";
  e.lowered_name = std::string(lowered);
  e.log = std::string(log);
  e.cubin = std::string(cubin);
  e.nvrtc_ms = std::atof(std::string(ms).c_str());
  if (!decode_resources(resources, e.resources)) return std::nullopt;
  return e;
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  std::string data;
  char chunk[1 << 16];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) data.append(chunk, n);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return std::nullopt;
  return data;
}

bool write_file(const std::filesystem::path& path, std::string_view data) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  ok = (std::fclose(f) == 0) && ok;
  return ok;
}

std::filesystem::path env_path(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::filesystem::path(v) : std::filesystem::path();
}

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::filesystem::path claim_path(const std::filesystem::path& entry) {
  std::filesystem::path p = entry;
  return p += ".claim";
}

// A claim is live while its process runs (known on this host only) and for
// at most an hour (a claim from another host sharing the folder).
bool claim_is_live(const std::filesystem::path& path) {
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(path, ec);
  if (ec) return false;
  const auto age = std::filesystem::file_time_type::clock::now() - written;
  if (age > std::chrono::hours(1)) return false;
  std::optional<std::string> text = read_file(path);
  if (!text) return false;
  std::istringstream in(*text);
  std::string host;
  long pid = 0;
  if (!(in >> host >> pid) || pid <= 0) return age < std::chrono::seconds(10);  // being written, or torn
  if (host != this_host()) return true;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

CubinCache::CubinCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path CubinCache::default_dir() {
  if (auto p = env_path("KTUNE_CACHE_DIR"); !p.empty()) return p;
  if (auto p = env_path("XDG_CACHE_HOME"); !p.empty()) return p / "ktune";
  if (auto p = env_path("HOME"); !p.empty()) return p / ".cache" / "ktune";
  std::error_code ec;
  return std::filesystem::temp_directory_path(ec) / "ktune";
}

std::filesystem::path CubinCache::path_of(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".kcubin");
}

std::optional<CacheEntry> CubinCache::load(const std::string& key) const {
  std::optional<std::string> data = read_file(path_of(key));
  if (!data) return std::nullopt;
  return decode(key, *data);
}

bool CubinCache::store(const std::string& key, const CacheEntry& entry) const {
  static std::atomic<unsigned long> counter{0};
  std::filesystem::path target = path_of(key);
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  // Unique per process and call, in the target's folder so rename() is atomic.
  std::filesystem::path temp = target.parent_path() / (".tmp." + key.substr(0, 16) + "." +
                                                      std::to_string(::getpid()) + "." +
                                                      std::to_string(counter++));
  if (!write_file(temp, encode(key, entry))) {
    std::filesystem::remove(temp, ec);
    return false;
  }
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    return false;
  }
  return true;
}

bool CubinCache::claim(const std::string& key) const {
  const std::filesystem::path path = claim_path(path_of(key));
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      const std::string owner = this_host() + " " + std::to_string(::getpid()) + "\n";
      const bool written = ::write(fd, owner.data(), owner.size()) == static_cast<ssize_t>(owner.size());
      ::close(fd);
      if (!written) std::filesystem::remove(path, ec);  // others would wait on a claim they cannot read
      return true;
    }
    if (errno != EEXIST) return true;  // no claims possible here: compile without one
    if (claim_is_live(path)) return false;
    std::filesystem::remove(path, ec);  // abandoned: take it over
  }
  return false;
}

void CubinCache::release(const std::string& key) const {
  std::error_code ec;
  std::filesystem::remove(claim_path(path_of(key)), ec);
}

std::optional<CacheEntry> CubinCache::wait_for(const std::string& key, double max_wait_s) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_wait_s);
  const std::filesystem::path claim = claim_path(path_of(key));
  while (std::chrono::steady_clock::now() < until) {
    if (std::optional<CacheEntry> e = load(key)) return e;
    if (!claim_is_live(claim)) return load(key);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return load(key);
}

}  // namespace ktune
