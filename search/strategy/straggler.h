// When a features request (StrategyContext::features) stops waiting for its
// slowest compiles. A proposal that waits for every compile of its short
// list waits for the slowest: on the benchmark hub's convolution (2-3 s of
// NVRTC a configuration, up to 8 s) a proposal took 5-10 s while the GPU
// idled. So once the request has run for kFactor times the median compile
// time of its compiles ended so far (at least kFloorS), the rest are
// answered as not known yet (StaticFeatures::pending) and go on compiling:
// a later request or measurement of them takes their cubin. The same rule
// holds live (compile_features, tuner/tune/static_features.cpp) and in a
// replay (ReplayClock::features), so that a replay predicts a live run.
// A request of more compiles than there are compile processes runs in
// waves, and its patience grows with their number: a compile that waits for
// a process is not a straggler.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace ktune {

struct StragglerRule {
  static constexpr double kFactor = 3.0;
  static constexpr double kFloorS = 1.0;

  // Seconds from the request's start after which it stops waiting, given
  // the compile times (seconds) of its compiles ended so far, cache hits
  // left out, and how many compiles it started on how many processes;
  // infinity while none has ended.
  static double patience(std::vector<double> ended_s, size_t compiles, size_t slots) {
    if (ended_s.empty()) return std::numeric_limits<double>::infinity();
    const size_t waves = std::max<size_t>(1, (compiles + std::max<size_t>(slots, 1) - 1) / std::max<size_t>(slots, 1));
    const size_t mid = ended_s.size() / 2;
    std::nth_element(ended_s.begin(), ended_s.begin() + mid, ended_s.end());
    double median = ended_s[mid];
    if (ended_s.size() % 2 == 0) median = (median + *std::max_element(ended_s.begin(), ended_s.begin() + mid)) / 2;
    return std::max(kFloorS, kFactor * median) * static_cast<double>(waves);
  }
};

}  // namespace ktune
