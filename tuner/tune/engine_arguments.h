// The spec's kernel arguments as the GPU engine takes them: scalars, buffers
// and __constant__ arrays with their fills. The same for every configuration,
// so made once per run (GpuEvaluator), apart from a configuration's build
// (tuner/build/build.h).
#pragma once

#include <vector>

#include "tuner/gpu/args.h"
#include "tuner/spec/spec.h"

namespace ktune {

// A generator fill is evaluated here into a file the engine reads. Throws
// Error::bad_input for an argument the engine cannot provide.
std::vector<gpu::ArgSpec> engine_arguments(const Spec& spec);

}  // namespace ktune
