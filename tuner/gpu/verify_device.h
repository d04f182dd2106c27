// Verification on the GPU: compare_outputs (tuner/gpu/verify.h) without copying
// outputs to the host.
//
// Copying every output back and comparing it on the host cost hundreds of
// milliseconds per configuration for outputs of a few hundred MB. The worker
// instead uploads the expected outputs once (DeviceVerifier::set_expected) and
// compares on the device with two small kernels compiled by NVRTC through the
// cubin cache: pass 1 counts failed elements and finds the worst score (one
// atomic per warp that saw a failure), pass 2 (a no-op unless something
// failed) finds the lowest index holding that score. Only a few words per
// buffer come back, plus the two elements named in the message.
//
// The outcome is the one compare_outputs gives, field for field and in the
// same words: the kernel repeats its scoring in double precision with FMA
// contraction off (-fmad=false), and the host side applies its merge rule
// (highest score, lowest index, first buffer on ties). Keep the kernel source
// (verify_device.cpp) in step with verify.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/compile/compiler.h"
#include "tuner/gpu/devices.h"
#include "tuner/gpu/driver.h"
#include "tuner/gpu/args.h"
#include "tuner/gpu/verify.h"

namespace ktune::gpu {

// The compare kernels for one architecture: what the worker compiles, so the
// CPU tests compile exactly that. Two extern "C" kernels: kCountKernel
// (the request's kernel_name) and kLocateKernel.
CompileRequest compare_kernel_request(const Arch& arch);
inline constexpr const char* kCountKernel = "ktune_verify_count";
inline constexpr const char* kLocateKernel = "ktune_verify_locate";

// What the kernels leave for one buffer.
struct BufferTally {
  std::uint64_t failed = 0;      // elements over their tolerance
  std::uint64_t worst_bits = 0;  // bit pattern of the highest score (a double >= 0)
  std::uint64_t index = 0;       // lowest index with that score (when failed > 0)
};

// The buffer holding the worst element under compare_outputs' rule: the
// highest score, the first buffer on ties; nullopt when no score beats 0.
std::optional<std::size_t> worst_buffer(const std::vector<BufferTally>& tallies);

// compare_outputs' checks before any element: every expected buffer has an
// output of the same name (the last one of that name counts), type and byte
// size. Returns compare_outputs' reason for the first that does not ("" when
// all do) and, in *match, the output index for each expected buffer.
std::string match_outputs(const std::vector<DeviceBufferView>& got,
                          const std::vector<DeviceBufferView>& expected,
                          std::vector<std::size_t>* match);

// Blocks of kCompareThreads for a grid-stride pass over n elements: one
// wave of the blocks the device holds at once (resident; 0: unknown), never
// more than the elements need.
inline constexpr unsigned kCompareThreads = 256;
std::uint32_t compare_blocks(std::uint64_t n, std::uint64_t resident);

// Worker side: the expected outputs on the device and the kernels that check
// outputs against them. Launches on the legacy default stream, which waits
// for the kernel under test (the Measurer's stream is a blocking one).
// Throws CudaError for driver failures and Error when the kernels do not compile.
class DeviceVerifier {
 public:
  // Compiles the kernels for the device (a cubin cache hit after the first time).
  DeviceVerifier(const CudaApi& api, const DeviceProperties& device);

  // Uploads the expected outputs, replacing earlier ones. On failure (out of
  // device memory, say) nothing is kept: empty() is true.
  void set_expected(const std::vector<HostBuffer>& expected);
  // The same from buffers already on the device (a reference run's outputs
  // in this worker), copied device to device: nothing crosses the host.
  void adopt(const std::vector<DeviceBufferView>& outputs);
  bool empty() const { return expected_.empty(); }
  void clear();

  // compare_outputs(outputs read back, the expected outputs, tol), computed here.
  VerifyOutcome compare(const std::vector<DeviceBufferView>& got, const Tolerance& tol);

 private:
  struct Kernel {
    CUfunction fn = nullptr;
    std::uint64_t resident = 0;  // blocks the whole device holds at once
  };
  Kernel kernel(const char* name, int sm_count) const;
  void launch(const Kernel& k, std::uint64_t elements, void** params);
  double element(const DeviceBufferView& buffer, std::uint64_t index) const;

  const CudaApi& api_;
  std::optional<Module> module_;
  Kernel count_, locate_;
  std::vector<DeviceMemory> memory_;        // one per expected buffer
  std::vector<DeviceBufferView> expected_;  // pointing into memory_
  DeviceMemory words_;                      // failed[n], worst_bits[n], index[n]
  // Reused by every compare, so that a configuration allocates nothing.
  std::vector<std::uint64_t> host_words_;
  std::vector<BufferTally> tallies_;
  std::vector<std::size_t> match_;
};

}  // namespace ktune::gpu
