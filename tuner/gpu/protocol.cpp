#include "tuner/gpu/protocol.h"

#include <utility>

#include "tuner/base/wire.h"

namespace ktune::gpu {

// The wire layout of each type, in one list that serves both directions.
template <class A> void fields(A& a, Fill& f) { a(f.kind, f.seed, f.lo, f.hi, f.value, f.start, f.step, f.path, f.mean, f.stddev); }
template <class A> void fields(A& a, ArgSpec& s) {
  a(s.name, s.kind, s.type, s.count, s.fill, s.output, s.read_write, s.value, s.int_value, s.map.of, s.map.dims,
    s.map.stride_bytes, s.map.box, s.map.swizzle);
}
template <class A> void fields(A& a, LaunchGeometry& g) { a(g.grid, g.block, g.dynamic_smem); }
template <class A> void fields(A& a, OutputTolerance& t) { a(t.name, t.atol, t.rtol); }
template <class A> void fields(A& a, Tolerance& t) { a(t.atol, t.rtol, t.outputs); }
template <class A> void fields(A& a, MeasureOptions& o) {
  a(o.warmup_ms, o.min_sample_ms, o.max_launches_per_sample, o.min_samples, o.max_samples,
    o.max_noise, o.time_cap_ms, o.cold, o.race_above_ms, o.race_samples, o.race_first_above_ms, o.energy_ms);
}
template <class A> void fields(A& a, Job& j) {
  a(j.label, j.cubin, j.kernel_name, j.geometry, j.args, j.verify, j.tolerance,
    j.capture_outputs, j.capture_every_buffer, j.keep_as_expected, j.measure, j.measure_options, j.timeout_s, j.profile, j.metrics);
}
template <class A> void fields(A& a, Timing& t) {
  a(t.median_ms, t.min_ms, t.max_ms, t.mean_ms, t.stddev_ms, t.noise, t.launches_per_sample,
    t.throttled_samples, t.converged, t.stopped_early, t.cold, t.samples_ms, t.power_w, t.energy_j,
    t.energy_window_ms, t.energy_note);
}
template <class A> void fields(A& a, FunctionAttributes& r) {
  a(r.registers, r.static_smem, r.local_bytes, r.const_bytes, r.max_threads_per_block,
    r.active_blocks_per_sm, r.occupancy);
}
template <class A> void fields(A& a, Sensors& s) {
  a(s.valid, s.sm_clock_mhz, s.mem_clock_mhz, s.temperature_c, s.power_mw, s.reasons);
}
template <class A> void fields(A& a, Mismatch& m) { a(m.buffer, m.index, m.got, m.expected, m.failed_elements); }
template <class A> void fields(A& a, HostBuffer& b) { a(b.name, b.type, b.bytes); }
template <class A> void fields(A& a, Result& r) {
  a(r.status, r.interrupted, r.reason, r.timing, r.resources, r.sensors, r.mismatch, r.outputs, r.wall_ms, r.load_ms, r.verify_ms,
    r.benchmark_ms, r.counter_metrics, r.counter_values, r.counters_note, r.profile_ms);
}
template <class A> void fields(A& a, DeviceProperties& d) {
  a(d.ordinal, d.name, d.uuid, d.cc_major, d.cc_minor, d.sm_count, d.total_memory,
    d.max_sm_clock_mhz, d.max_mem_clock_mhz, d.memory_bus_width, d.l2_bytes, d.smem_per_block,
    d.smem_per_block_optin, d.smem_per_sm, d.max_threads_per_block, d.max_threads_per_sm,
    d.max_blocks_per_sm, d.regs_per_block, d.regs_per_sm, d.warp_size, d.max_block_dim,
    d.max_grid_dim, d.cuda_version, d.driver_version);
}
template <class A> void fields(A& a, Ready& r) { a(r.state, r.message, r.devices, r.gpu); }

using wire::Reader;
using wire::Writer;
using wire::read;
using wire::write;

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

bool send_message(int fd, MessageType type, const std::vector<std::uint8_t>& payload) {
  return wire::send_frame(fd, static_cast<std::uint32_t>(type), payload);
}

std::optional<Message> receive_message(int fd) {
  std::optional<wire::Frame> f = wire::receive_frame(fd, static_cast<std::uint32_t>(MessageType::Result));
  if (!f) return std::nullopt;
  return Message{static_cast<MessageType>(f->type), std::move(f->payload)};
}

}  // namespace ktune::gpu
