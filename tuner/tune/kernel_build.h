// From a spec and one configuration to the CompileRequest that builds it: the
// -D defines or template arguments, the spec's compiler options, the target
// arch and the launch shape the occupancy figure needs. Shared by `ktune
// compile`, the tuning loop and the reference-kernel build, so all three
// compile a configuration identically (and hit the same cubin cache entries).
// Beside it, the arguments the kernel runs with, as the GPU engine takes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "search/expr/value.h"
#include "tuner/compile/compiler.h"
#include "tuner/gpu/args.h"
#include "tuner/spec/spec.h"

namespace ktune {

CompileRequest make_compile_request(const Spec& spec, const std::vector<Value>& config, const Launch& launch,
                                    const Arch& arch);

// A configuration's launch and the request that compiles it, which needs the
// launch (block size for the occupancy figure, defines from the grid). No
// request when the launch cannot be computed: `launch.error` says why, and
// the configuration is as good as one that does not compile.
struct KernelBuild {
  LaunchResult launch;
  std::optional<CompileRequest> request;
};
KernelBuild plan_build(const Spec& spec, const std::vector<Value>& config, const Arch& arch);

// The reference kernel (verify.reference): the same source and options, with
// the defines of `config` so that macros the file expects are defined.
CompileRequest make_reference_request(const Spec& spec, const std::vector<Value>& config, const Launch& launch,
                                      const Arch& arch);

// Parses "k=v,k=v" into configuration values matching the spec's parameters
// (each value must be one of the parameter's listed values, compared as
// Python's str()). Throws Error::bad_input naming the problem.
std::vector<Value> parse_config_option(const Spec& spec, const std::string& text);

// The engine's description of the spec's kernel arguments: scalars, buffers
// and __constant__ arrays with their fills (a generator fill evaluated here
// into a file the engine reads). Throws Error::bad_input for an argument the
// engine cannot provide.
std::vector<gpu::ArgSpec> engine_arguments(const Spec& spec);

}  // namespace ktune
