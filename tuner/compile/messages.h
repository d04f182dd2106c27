// What the compile pool (tuner/compile/pool.h) and its compile children say
// to each other, in the frames of tuner/base/wire.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ktune/error.h"
#include "tuner/compile/compiler.h"

namespace ktune::compile_wire {

enum class MessageType : std::uint32_t {
  Setup = 1,     // parent -> child, once: its CompilerOptions
  Ready = 2,     // child -> parent, once: set up, waiting for requests
  Job = 3,       // parent -> child: one CompileRequest
  Done = 4,      // child -> parent: the Reply to the last Job
  Shutdown = 5,  // parent -> child
};

// A compile child's answer: the CompileResult, or the ktune::Error that
// Compiler::compile threw for a problem of the whole run (an unreadable source),
// to be rethrown in the parent. A crash of the child has no reply: the parent
// sees the socket close.
struct Reply {
  CompileResult result;
  bool threw = false;
  Error::Kind error_kind = Error::Kind::Failed;
  std::string error_message;
  SourceLocation error_where;
};

struct Message {
  MessageType type = MessageType::Shutdown;
  std::vector<std::uint8_t> payload;
};

std::vector<std::uint8_t> encode(const CompilerOptions& options);
std::vector<std::uint8_t> encode(const CompileRequest& request);
std::vector<std::uint8_t> encode(const Reply& reply);
CompilerOptions decode_compiler_options(const std::vector<std::uint8_t>& payload);
CompileRequest decode_compile_request(const std::vector<std::uint8_t>& payload);
Reply decode_reply(const std::vector<std::uint8_t>& payload);

// send returns false when the peer is gone; receive returns nullopt on EOF and
// throws Error on a malformed frame.
bool send_message(int fd, MessageType type, const std::vector<std::uint8_t>& payload);
std::optional<Message> receive_message(int fd);

}  // namespace ktune::compile_wire
