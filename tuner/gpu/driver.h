// The CUDA driver, loaded at run time.
//
// ktune never links libcuda: the binary must start on machines without a GPU
// (CI, the build host). cuda_driver() dlopens libcuda.so.1 once per process,
// resolves every entry point ktune uses through cuGetProcAddress (so each one
// has the ABI of a fixed CUDA version, whatever the installed driver), and calls
// cuInit. A missing library is a normal, reported state (DriverState::NoDriver),
// never a crash.
//
// The tuning process itself never calls cuda_driver(): kernels run in worker
// processes (tuner/gpu/engine.h), so a crash or a lost context costs a worker.
//
// Every driver call is checked with check(), which throws CudaError naming the
// call, the error's name and its description. The RAII types below own one
// driver object each; their destructors never throw.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ktune/error.h"

namespace ktune::gpu {

// The entry points ktune uses. Names are cuda.h's, so members read like the
// driver API (`api.cuMemAlloc(...)`); where cuda.h maps a name to a versioned
// symbol (cuMemAlloc -> cuMemAlloc_v2) the member's type follows that mapping.
#define KTUNE_CUDA_FUNCTIONS(X)                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)  \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)             \
  X(cuDeviceGetUuid) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)                \
  X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleUnload)              \
  X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel)      \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8)                  \
  X(cuMemsetD8Async) X(cuMemGetInfo) X(cuEventCreate) X(cuEventRecord)                      \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy) X(cuStreamCreate)           \
  X(cuStreamDestroy) X(cuStreamSynchronize) X(cuOccupancyMaxActiveBlocksPerMultiprocessor)      \
  X(cuCtxGetCurrent) X(cuCtxGetDevice) X(cuMemcpyDtoDAsync) X(cuMemsetD32Async)             \
  X(cuModuleGetGlobal) X(cuEventQuery) X(cuTensorMapEncodeTiled)

struct CudaApi {
#define KTUNE_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  KTUNE_CUDA_FUNCTIONS(KTUNE_CUDA_MEMBER)
#undef KTUNE_CUDA_MEMBER
};

enum class DriverState {
  Ready,     // loaded, every entry point resolved, cuInit succeeded
  NoDriver,  // libcuda.so.1 is not installed: the normal state of a build host
  Unusable,  // the library is there but too old, incomplete, or cuInit failed
};

struct DriverLoad {
  DriverState state = DriverState::NoDriver;
  std::string message;          // why not Ready ("" when Ready)
  const CudaApi* api = nullptr;  // non-null only when Ready
  int cuda_version = 0;          // cuDriverGetVersion, e.g. 13000

  bool ready() const { return state == DriverState::Ready; }
};

const char* to_string(DriverState state);

// The process-wide driver, loaded (and cuInit called) on first use.
const DriverLoad& cuda_driver();

// Loads a driver library by name without caching it; lets tests exercise the
// "no driver" path on any machine. The returned api (if any) lives forever.
DriverLoad load_cuda_driver(const char* library_name);

// A failed driver call. code() is the CUresult; sticky() says the context is
// poisoned (illegal address, trap, ...) and the process must start afresh.
class CudaError : public Error {
 public:
  CudaError(CUresult code, std::string message);
  CUresult code() const { return code_; }
  bool sticky() const;

 private:
  CUresult code_;
};

// True for the errors after which every later call in this context fails.
bool is_sticky_error(CUresult code);

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" (falls back to the number).
std::string describe(const CudaApi& api, CUresult code);

// Throws CudaError("<what>: <name>: <description>") unless code is CUDA_SUCCESS.
void check(const CudaApi& api, CUresult code, const std::string& what);

// The device's primary context, retained and made current on this thread.
class PrimaryContext {
 public:
  PrimaryContext(const CudaApi& api, int ordinal);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  CUdevice device() const { return device_; }
  CUcontext get() const { return context_; }

 private:
  const CudaApi& api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

// A loaded module (cubin image) and lookup of its kernels by lowered name.
class Module {
 public:
  Module(const CudaApi& api, const std::vector<std::uint8_t>& image);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  CUfunction function(const std::string& lowered_name) const;
  // A module-scope variable (a __constant__ array): its address and size;
  // nullopt when the module has none by that name.
  struct Global {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
  };
  std::optional<Global> global(const std::string& name) const;

 private:
  const CudaApi& api_;
  CUmodule module_ = nullptr;
};

// One device allocation.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const CudaApi& api, std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t size() const { return bytes_; }

 private:
  void release() noexcept;
  const CudaApi* api_ = nullptr;
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

class Event {
 public:
  explicit Event(const CudaApi& api);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  CUevent get() const { return event_; }

 private:
  const CudaApi& api_;
  CUevent event_ = nullptr;
};

class Stream {
 public:
  explicit Stream(const CudaApi& api);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  CUstream get() const { return stream_; }

 private:
  const CudaApi& api_;
  CUstream stream_ = nullptr;
};

}  // namespace ktune::gpu
