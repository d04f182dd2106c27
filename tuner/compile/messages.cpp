#include "tuner/compile/messages.h"

#include <utility>

#include "tuner/base/wire.h"

namespace ktune {

// The wire layout of each type (found by argument-dependent lookup).
template <class A> void fields(A& a, Arch& r) { a(r.sm, r.suffix); }
template <class A> void fields(A& a, CompilerOptions& o) { a(o.use_cache, o.cache_dir, o.cuda_include_dir, o.code_reuse); }
template <class A> void fields(A& a, CompileRequest& r) {
  a(r.source, r.source_path, r.kernel_name, r.template_args, r.defines, r.options, r.include_dirs, r.arch,
    r.std, r.block_threads, r.dynamic_smem, r.compiler, r.defer_if_busy);
}
template <class A> void fields(A& a, KernelResources& r) {
  a(r.registers, r.static_smem, r.local_bytes, r.stack_bytes, r.const_bytes, r.param_bytes,
    r.spill_store_bytes, r.spill_load_bytes, r.launch_bound_threads, r.max_registers, r.max_threads_per_block);
}
template <class A> void fields(A& a, Occupancy& o) {
  a(o.blocks_per_sm, o.active_warps, o.fraction, o.limited_by, o.error);
}
template <class A> void fields(A& a, CompileResult& r) {
  a(r.ok, r.log, r.cubin, r.lowered_name, r.compile_ms, r.cache_hit, r.cache_key, r.resources, r.occupancy,
    r.same_code, r.deferred);
}
template <class A> void fields(A& a, SourceLocation& w) { a(w.file, w.line, w.column); }
namespace compile_wire {
template <class A> void fields(A& a, Reply& r) {
  a(r.result, r.threw, r.error_kind, r.error_message, r.error_where);
}

}  // namespace compile_wire

namespace compile_wire {

std::vector<std::uint8_t> encode(const CompilerOptions& o) { return wire::write(o); }
std::vector<std::uint8_t> encode(const CompileRequest& r) { return wire::write(r); }
std::vector<std::uint8_t> encode(const Reply& r) { return wire::write(r); }
CompilerOptions decode_compiler_options(const std::vector<std::uint8_t>& p) { return wire::read<CompilerOptions>(p); }
CompileRequest decode_compile_request(const std::vector<std::uint8_t>& p) { return wire::read<CompileRequest>(p); }
Reply decode_reply(const std::vector<std::uint8_t>& p) { return wire::read<Reply>(p); }

bool send_message(int fd, MessageType type, const std::vector<std::uint8_t>& payload) {
  return wire::send_frame(fd, static_cast<std::uint32_t>(type), payload);
}

std::optional<Message> receive_message(int fd) {
  std::optional<wire::Frame> f = wire::receive_frame(fd, static_cast<std::uint32_t>(MessageType::Shutdown));
  if (!f) return std::nullopt;
  return Message{static_cast<MessageType>(f->type), std::move(f->payload)};
}

}  // namespace compile_wire
}  // namespace ktune
