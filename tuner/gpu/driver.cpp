#include "tuner/gpu/driver.h"

#include <dlfcn.h>

#include <utility>

namespace ktune::gpu {
namespace {

// Every entry point in KTUNE_CUDA_FUNCTIONS has had its present signature since
// CUDA 12.0, so asking for the 12.0 ABI works with any driver from 12.0 on and
// matches the member types taken from cuda.h 13.
constexpr int kRequestedAbi = 12000;

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

DriverLoad fail(DriverState state, std::string message) {
  DriverLoad load;
  load.state = state;
  load.message = std::move(message);
  return load;
}

// Resolves every member of api; returns the first name that could not be found.
std::string resolve_all(GetProcAddress get, CudaApi& api) {
  std::string missing;
  auto resolve = [&](const char* name, void** slot) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rc = get(name, slot, kRequestedAbi, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if ((rc != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || !*slot) && missing.empty())
      missing = name;
  };
#define KTUNE_CUDA_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&api.name));
  KTUNE_CUDA_FUNCTIONS(KTUNE_CUDA_RESOLVE)
#undef KTUNE_CUDA_RESOLVE
  return missing;
}

}  // namespace

const char* to_string(DriverState state) {
  switch (state) {
    case DriverState::Ready: return "ready";
    case DriverState::NoDriver: return "no CUDA driver";
    case DriverState::Unusable: return "CUDA driver unusable";
  }
  return "?";
}

DriverLoad load_cuda_driver(const char* library_name) {
  void* lib = dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return fail(DriverState::NoDriver,
                std::string("no CUDA driver: ") + (why ? why : library_name));
  }
  // cuGetProcAddress_v2 (CUDA 12.0+) is the one symbol taken by name; all
  // others come through it with an explicit ABI version.
  auto get = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!get)
    return fail(DriverState::Unusable,
                "CUDA driver too old: cuGetProcAddress_v2 missing (ktune needs CUDA 12.0+)");
  auto* api = new CudaApi();  // lives for the process, like the library itself
  std::string missing = resolve_all(get, *api);
  if (!missing.empty()) {
    delete api;
    return fail(DriverState::Unusable, "CUDA driver lacks entry point " + missing);
  }
  CUresult rc = api->cuInit(0);
  if (rc != CUDA_SUCCESS) {
    DriverLoad load = fail(DriverState::Unusable, "cuInit failed: " + describe(*api, rc));
    delete api;
    return load;
  }
  DriverLoad load;
  load.state = DriverState::Ready;
  load.api = api;
  check(*api, api->cuDriverGetVersion(&load.cuda_version), "cuDriverGetVersion");
  return load;
}

const DriverLoad& cuda_driver() {
  static const DriverLoad load = load_cuda_driver("libcuda.so.1");
  return load;
}

CudaError::CudaError(CUresult code, std::string message)
    : Error(Kind::Failed, std::move(message)), code_(code) {}

bool CudaError::sticky() const { return is_sticky_error(code_); }

bool is_sticky_error(CUresult code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

std::string describe(const CudaApi& api, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(code, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(code, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(static_cast<int>(code));
  if (text) out += std::string(": ") + text;
  return out;
}

void check(const CudaApi& api, CUresult code, const std::string& what) {
  if (code != CUDA_SUCCESS) throw CudaError(code, what + ": " + describe(api, code));
}

PrimaryContext::PrimaryContext(const CudaApi& api, int ordinal) : api_(api) {
  check(api_, api_.cuDeviceGet(&device_, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  check(api_, api_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  CUresult rc = api_.cuCtxSetCurrent(context_);
  if (rc != CUDA_SUCCESS) {
    api_.cuDevicePrimaryCtxRelease(device_);
    check(api_, rc, "cuCtxSetCurrent");
  }
}

PrimaryContext::~PrimaryContext() {
  api_.cuCtxSetCurrent(nullptr);
  api_.cuDevicePrimaryCtxRelease(device_);
}

Module::Module(const CudaApi& api, const std::vector<std::uint8_t>& image) : api_(api) {
  check(api_, api_.cuModuleLoadData(&module_, image.data()), "cuModuleLoadData");
}

Module::~Module() { api_.cuModuleUnload(module_); }

CUfunction Module::function(const std::string& lowered_name) const {
  CUfunction fn = nullptr;
  check(api_, api_.cuModuleGetFunction(&fn, module_, lowered_name.c_str()),
        "cuModuleGetFunction('" + lowered_name + "')");
  return fn;
}

std::optional<Module::Global> Module::global(const std::string& name) const {
  Global g;
  const CUresult rc = api_.cuModuleGetGlobal(&g.ptr, &g.bytes, module_, name.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND) return std::nullopt;
  check(api_, rc, "cuModuleGetGlobal('" + name + "')");
  return g;
}

DeviceMemory::DeviceMemory(const CudaApi& api, std::size_t bytes) : api_(&api), bytes_(bytes) {
  // A zero-byte buffer still gets a distinct, valid address.
  check(api, api.cuMemAlloc(&ptr_, bytes ? bytes : 1),
        "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
}

DeviceMemory::~DeviceMemory() { release(); }

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : api_(other.api_),
      ptr_(std::exchange(other.ptr_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    release();
    api_ = other.api_;
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceMemory::release() noexcept {
  if (ptr_ && api_) api_->cuMemFree(ptr_);
  ptr_ = 0;
}

Event::Event(const CudaApi& api) : api_(api) {
  check(api_, api_.cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate");
}

Event::~Event() { api_.cuEventDestroy(event_); }

Stream::Stream(const CudaApi& api) : api_(api) {
  // A blocking stream: ordered after the synchronous-API copies and memsets
  // (legacy default stream) that prepare arguments.
  check(api_, api_.cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
}

Stream::~Stream() { api_.cuStreamDestroy(stream_); }

}  // namespace ktune::gpu
