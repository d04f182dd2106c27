// A configuration's build: one configuration of a spec compiled for one
// architecture, and the status that outcome gives it. Everything that
// compiles a configuration builds it here (the tuning run on a GPU, the
// compile features strategies ask for, `ktune compile`, `ktune compare
// --arch`, the runtime Launcher), so all compile it identically, share the
// cubin cache's entries and agree on what a failure is.
//
// Two halves, because callers hand the compile on in different ways (a pool
// with priorities, a window over a stream, the compiler in this process):
// plan_build() gives the launch and the request, finish_build() takes the
// compile's result and gives the status. finish_build() is the one place where
// a failed build becomes a status:
//   invalid        the spec's geometry gives no launch (nothing is compiled), or
//                  the compiled kernel cannot be launched that way on the
//                  architecture: a block past the kernel's thread limit, shared
//                  memory past the opt-in maximum, no block fitting on an SM
//                  (the occupancy calculator's error, read from the cubin);
//   compile_error  the compiler failed (its log is kept);
//   ok             the configuration can go to a GPU.
// The occupancy rule holds on a GPU too: the target architecture has the
// device's sm number (KernelSpec::target_arch), so its limits are the
// device's, the device would refuse the launch the same way, and no GPU time
// is spent learning it. A GPU may still refuse a configuration that is ok
// here (its own check of the launch, a missing __constant__ array); the
// engine reports that as `invalid` as well.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "db/record/record.h"
#include "search/expr/value.h"
#include "tuner/compile/compiler.h"
#include "tuner/compile/pool.h"
#include "tuner/spec/spec.h"

namespace ktune {

// A configuration's launch and the request that compiles it, which needs the
// launch (block size for the occupancy figure, defines from the grid). No
// request when the launch cannot be computed (`launch.error` says why).
struct BuildPlan {
  LaunchResult launch;
  std::optional<CompileRequest> request;
};
BuildPlan plan_build(const Spec& spec, const std::vector<Value>& config, const Arch& arch);

// What a build came to: the launch, the compile's result, and the status with
// its reason ("" when ok).
struct Build {
  std::optional<Launch> launch;
  CompileResult compile;  // empty when nothing was compiled (no launch)
  db::Status status = db::Status::Invalid;
  std::string reason;
  bool ok() const { return status == db::Status::Ok; }
  // A compile ran: `compile` holds its figures (and its log).
  bool compiled() const { return launch.has_value(); }
};

// The status of a planned build. `result` is the compile of the plan's
// request; it is ignored (and may be left out) when `launch` has none.
Build finish_build(const LaunchResult& launch, CompileResult result = {});

// Every configuration planned and compiled in `pool` (all submitted before
// any is awaited), in order.
std::vector<Build> build_all(const Spec& spec, std::span<const std::vector<Value>> configs, const Arch& arch,
                             CompilePool& pool);
// One configuration compiled in this process, for a caller with no pool.
Build build_one(const Spec& spec, const std::vector<Value>& config, const Arch& arch, const Compiler& compiler);

// The build in a stored evaluation: its status and reason, the compile's
// figures where it compiled (compile_ms, 0 for a cache hit; registers,
// shared and local memory, theoretical occupancy where the launch fits) and
// the log of a compile error. A replay reads these same fields back.
void record_build(const Build& build, db::Evaluation& e);

// The reference kernel (verify.reference): the same source and options, with
// the defines of `config` so that macros the file expects are defined.
CompileRequest make_reference_request(const Spec& spec, const std::vector<Value>& config, const Launch& launch,
                                      const Arch& arch);

}  // namespace ktune
