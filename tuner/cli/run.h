// What `ktune run` reports of one configuration's run (tuner/cli/run.cpp):
// apart from the run itself so that the report can be checked without a GPU.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "tuner/gpu/devices.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/gpu_evaluator.h"

namespace ktune::cli {

struct RunReportOptions {
  int gpu = 0;              // the GPU's index, as named in the report
  std::string out_dir;      // "": nothing written
  std::size_t print = 8;    // elements printed per buffer
  bool all_buffers = false; // the buffers are every buffer argument, not only the outputs
  bool json = false;
};

// Writes each of the run's buffers as OUT_DIR/NAME.bin (raw little-endian
// elements, the format `fill: file` reads), then prints the run to `os`: as
// text, or as one JSON document. Returns the exit status: 0 when the
// configuration ran ok (and verified, where it was checked), else 1.
int report_run(const Spec& spec, const gpu::DeviceProperties& device, const std::vector<Value>& config,
               const GpuEvaluator::Ran& ran, const RunReportOptions& o, std::ostream& os);

}  // namespace ktune::cli
