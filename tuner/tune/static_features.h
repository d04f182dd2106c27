// What the offline compile says about configurations before any GPU time is
// spent: registers, shared and local memory, theoretical occupancy, or that
// the configuration does not compile. It is the StrategyContext::features of a
// tuning run on a GPU (a replay reads the same figures from the recording), so
// model_rank, and auto through it, screen and rank candidates on a GPU host as
// they do in `ktune strategies compare`.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "search/strategy/strategy.h"
#include "tuner/compile/pool.h"
#include "tuner/compile/occupancy.h"
#include "tuner/spec/spec.h"

namespace ktune {

// One StaticFeatures per configuration, in order. The configurations are
// compiled together in `pool` (in parallel, through the cubin cache, so that a
// configuration measured later is not compiled again). A configuration whose
// launch geometry cannot be computed, or that fails to compile, is not
// `compiled`. The figures are those a measurement stores (db::Evaluation's
// registers, shared_bytes, local_bytes as spill_bytes, occupancy), which is
// what a replay gives the strategies.
// Once the straggler rule (search/strategy/straggler.h) stops waiting, the
// compiles not ended are answered as `pending` (not known yet) and go on in
// the pool, released: a later compile of the same configuration takes their
// cubin from the cache. `each` (optional) hears each configuration's
// features as its compile ends, in that order: index in `configs`. Once `abandon` (optional, asked
// every 20 ms) says true, the compiles not ended are dropped and their
// configurations answered as not compiled: for a proposal whose run's time
// is up, which is never measured.
std::vector<StaticFeatures> compile_features(const Spec& spec, const Arch& arch, CompilePool& pool,
                                             std::span<const Config> configs,
                                             const std::function<void(size_t, const StaticFeatures&)>& each = {},
                                             const std::function<bool()>& abandon = {});

}  // namespace ktune
