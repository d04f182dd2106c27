#include "tuner/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <type_traits>
#include <utility>

namespace ktune::gpu {
namespace {

// Messages above this are a corrupt frame, not data (outputs of a few GiB pass).
constexpr std::uint64_t kMaxPayload = std::uint64_t{64} << 30;

// The wire layout of each type, in one list that serves both directions.
template <class A> void fields(A& a, Fill& f) { a(f.kind, f.seed, f.lo, f.hi, f.value, f.start, f.step, f.path); }
template <class A> void fields(A& a, ArgSpec& s) {
  a(s.name, s.kind, s.type, s.count, s.fill, s.output, s.read_write, s.value, s.int_value);
}
template <class A> void fields(A& a, LaunchGeometry& g) { a(g.grid, g.block, g.dynamic_smem); }
template <class A> void fields(A& a, Tolerance& t) { a(t.atol, t.rtol); }
template <class A> void fields(A& a, MeasureOptions& o) {
  a(o.warmup_ms, o.min_sample_ms, o.max_launches_per_sample, o.min_samples, o.max_samples,
    o.max_noise, o.time_cap_ms, o.cold);
}
template <class A> void fields(A& a, Job& j) {
  a(j.label, j.cubin, j.kernel_name, j.geometry, j.args, j.verify, j.tolerance,
    j.capture_outputs, j.measure, j.measure_options, j.timeout_s);
}
template <class A> void fields(A& a, Timing& t) {
  a(t.median_ms, t.min_ms, t.max_ms, t.mean_ms, t.stddev_ms, t.noise, t.launches_per_sample,
    t.throttled_samples, t.converged, t.cold, t.samples_ms);
}
template <class A> void fields(A& a, Resources& r) {
  a(r.registers, r.static_smem, r.local_bytes, r.const_bytes, r.max_threads_per_block,
    r.active_blocks_per_sm, r.occupancy);
}
template <class A> void fields(A& a, Sensors& s) {
  a(s.valid, s.sm_clock_mhz, s.mem_clock_mhz, s.temperature_c, s.power_mw, s.reasons);
}
template <class A> void fields(A& a, Mismatch& m) { a(m.buffer, m.index, m.got, m.expected, m.failed_elements); }
template <class A> void fields(A& a, HostBuffer& b) { a(b.name, b.type, b.bytes); }
template <class A> void fields(A& a, Result& r) {
  a(r.status, r.reason, r.timing, r.resources, r.sensors, r.mismatch, r.outputs, r.wall_ms, r.load_ms, r.verify_ms,
    r.benchmark_ms);
}
template <class A> void fields(A& a, DeviceInfo& d) {
  a(d.ordinal, d.name, d.uuid, d.cc_major, d.cc_minor, d.sm_count, d.total_memory,
    d.max_sm_clock_mhz, d.max_mem_clock_mhz, d.memory_bus_width, d.l2_bytes, d.smem_per_block,
    d.smem_per_block_optin, d.smem_per_sm, d.max_threads_per_block, d.max_threads_per_sm,
    d.max_blocks_per_sm, d.regs_per_block, d.regs_per_sm, d.warp_size, d.max_block_dim,
    d.max_grid_dim, d.cuda_version, d.driver_version);
}
template <class A> void fields(A& a, Ready& r) { a(r.state, r.message, r.devices, r.gpu); }
template <class A, class X, class Y> void fields(A& a, std::pair<X, Y>& p) { a(p.first, p.second); }
template <class A> void fields(A& a, Arch& r) { a(r.sm, r.suffix); }
template <class A> void fields(A& a, CompilerOptions& o) { a(o.use_cache, o.cache_dir, o.cuda_include_dir); }
template <class A> void fields(A& a, CompileRequest& r) {
  a(r.source, r.source_path, r.kernel_name, r.template_args, r.defines, r.options, r.include_dirs, r.arch,
    r.std, r.block_threads, r.dynamic_smem, r.compiler);
}
template <class A> void fields(A& a, KernelResources& r) {
  a(r.registers, r.static_smem, r.local_bytes, r.stack_bytes, r.const_bytes, r.param_bytes,
    r.spill_store_bytes, r.spill_load_bytes, r.launch_bound_threads, r.max_registers, r.max_threads_per_block);
}
template <class A> void fields(A& a, Occupancy& o) {
  a(o.blocks_per_sm, o.active_warps, o.fraction, o.limited_by, o.error);
}
template <class A> void fields(A& a, CompileResult& r) {
  a(r.ok, r.log, r.cubin, r.lowered_name, r.compile_ms, r.cache_hit, r.cache_key, r.resources, r.occupancy);
}
template <class A> void fields(A& a, SourceLocation& w) { a(w.file, w.line, w.column); }
template <class A> void fields(A& a, CompileReply& r) {
  a(r.result, r.threw, r.error_kind, r.error_message, r.error_where);
}

// One field list per type serves both directions: Writer appends, Reader fills.
class Writer {
 public:
  std::vector<std::uint8_t> bytes;

  template <class... T>
  void operator()(T&... values) { (put(values), ...); }

 private:
  template <class T>
  void put(T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
      bytes.insert(bytes.end(), p, p + sizeof v);
    } else {
      fields(*this, v);
    }
  }
  void put(std::string& s) { put_blob(s.data(), s.size()); }
  void put(std::filesystem::path& p) {
    std::string s = p.string();
    put(s);
  }
  void put(std::vector<std::uint8_t>& v) { put_blob(v.data(), v.size()); }
  template <class T>
  void put(std::vector<T>& v) {
    std::uint64_t n = v.size();
    put(n);
    for (auto& x : v) put(x);
  }
  template <class T>
  void put(std::optional<T>& v) {
    bool has = v.has_value();
    put(has);
    if (has) put(*v);
  }
  template <class T, std::size_t N>
  void put(std::array<T, N>& a) { for (auto& x : a) put(x); }
  template <class T, std::size_t N>
  void put(T (&a)[N]) { for (auto& x : a) put(x); }
  void put_blob(const void* data, std::size_t size) {
    std::uint64_t n = size;
    put(n);
    const auto* p = static_cast<const std::uint8_t*>(data);
    bytes.insert(bytes.end(), p, p + size);
  }
};

class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& b) : bytes_(b) {}

  template <class... T>
  void operator()(T&... values) { (get(values), ...); }
  void finish() const {
    if (pos_ != bytes_.size()) throw Error::failed("GPU worker protocol: trailing bytes");
  }

 private:
  const std::uint8_t* take(std::uint64_t n) {
    if (n > bytes_.size() - pos_) throw Error::failed("GPU worker protocol: truncated message");
    const std::uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  template <class T>
  void get(T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      std::memcpy(&v, take(sizeof v), sizeof v);
    } else {
      fields(*this, v);
    }
  }
  void get(std::string& s) {
    std::uint64_t n = 0;
    get(n);
    const auto* p = take(n);
    s.assign(reinterpret_cast<const char*>(p), n);
  }
  void get(std::filesystem::path& p) {
    std::string s;
    get(s);
    p = std::move(s);
  }
  void get(std::vector<std::uint8_t>& v) {
    std::uint64_t n = 0;
    get(n);
    const auto* p = take(n);
    v.assign(p, p + n);
  }
  template <class T>
  void get(std::vector<T>& v) {
    std::uint64_t n = 0;
    get(n);
    if (n > bytes_.size() - pos_) throw Error::failed("GPU worker protocol: bad element count");
    v.assign(n, T{});
    for (auto& x : v) get(x);
  }
  template <class T>
  void get(std::optional<T>& v) {
    bool has = false;
    get(has);
    v.reset();
    if (has) get(v.emplace());
  }
  template <class T, std::size_t N>
  void get(std::array<T, N>& a) { for (auto& x : a) get(x); }
  template <class T, std::size_t N>
  void get(T (&a)[N]) { for (auto& x : a) get(x); }

  const std::vector<std::uint8_t>& bytes_;
  std::size_t pos_ = 0;
};

template <class T>
std::vector<std::uint8_t> write(const T& value) {
  Writer w;
  w(const_cast<T&>(value));  // Writer only reads; one field list serves both ways
  return std::move(w.bytes);
}

template <class T>
T read(const std::vector<std::uint8_t>& payload) {
  T value{};
  Reader r(payload);
  r(value);
  r.finish();
  return value;
}

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// false on EOF before the first byte; throws on EOF in the middle.
bool read_all(int fd, void* data, std::size_t size) {
  auto* p = static_cast<std::uint8_t*>(data);
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (done == 0) return false;
      throw Error::failed("GPU worker protocol: connection closed inside a message");
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

const char* to_string(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Invalid: return "invalid";
    case Status::RuntimeError: return "runtime_error";
    case Status::WrongResult: return "wrong_result";
    case Status::Timeout: return "timeout";
    case Status::Interrupted: return "interrupted";
  }
  return "?";
}

std::vector<std::uint8_t> encode(const Job& job) { return write(job); }
std::vector<std::uint8_t> encode(const Ready& ready) { return write(ready); }
std::vector<std::uint8_t> encode(const std::vector<HostBuffer>& b) { return write(b); }
std::vector<std::uint8_t> encode_progress(int launches) { return write(launches); }
std::vector<std::uint8_t> encode(const std::vector<ArgSpec>& args) { return write(args); }

std::vector<std::uint8_t> encode(const Result& result, bool worker_exits) {
  Writer w;
  w(const_cast<Result&>(result), worker_exits);
  return std::move(w.bytes);
}

Job decode_job(const std::vector<std::uint8_t>& p) { return read<Job>(p); }
Ready decode_ready(const std::vector<std::uint8_t>& p) { return read<Ready>(p); }
std::vector<HostBuffer> decode_buffers(const std::vector<std::uint8_t>& p) {
  return read<std::vector<HostBuffer>>(p);
}
int decode_progress(const std::vector<std::uint8_t>& p) { return read<int>(p); }

Result decode_result(const std::vector<std::uint8_t>& payload, bool* worker_exits) {
  Result result;
  bool exits = false;
  Reader r(payload);
  r(result, exits);
  r.finish();
  if (worker_exits) *worker_exits = exits;
  return result;
}

std::vector<std::uint8_t> encode(const CompilerOptions& o) { return write(o); }
std::vector<std::uint8_t> encode(const CompileRequest& r) { return write(r); }
std::vector<std::uint8_t> encode(const CompileReply& r) { return write(r); }
CompilerOptions decode_compiler_options(const std::vector<std::uint8_t>& p) { return read<CompilerOptions>(p); }
CompileRequest decode_compile_request(const std::vector<std::uint8_t>& p) { return read<CompileRequest>(p); }
CompileReply decode_compile_reply(const std::vector<std::uint8_t>& p) { return read<CompileReply>(p); }

bool send_message(int fd, MessageType type, const std::vector<std::uint8_t>& payload) {
  std::uint8_t header[12];
  auto t = static_cast<std::uint32_t>(type);
  std::uint64_t n = payload.size();
  std::memcpy(header, &t, 4);
  std::memcpy(header + 4, &n, 8);
  return write_all(fd, header, sizeof header) && write_all(fd, payload.data(), payload.size());
}

std::optional<Message> receive_message(int fd) {
  std::uint8_t header[12];
  if (!read_all(fd, header, sizeof header)) return std::nullopt;
  std::uint32_t t = 0;
  std::uint64_t n = 0;
  std::memcpy(&t, header, 4);
  std::memcpy(&n, header + 4, 8);
  if (t < 1 || t > static_cast<std::uint32_t>(MessageType::CompileDone) || n > kMaxPayload)
    throw Error::failed("GPU worker protocol: malformed frame header");
  Message m;
  m.type = static_cast<MessageType>(t);
  m.payload.resize(n);
  if (n && !read_all(fd, m.payload.data(), n))
    throw Error::failed("GPU worker protocol: connection closed inside a message");
  return m;
}

}  // namespace ktune::gpu
