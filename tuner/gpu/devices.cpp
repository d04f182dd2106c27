#include "tuner/gpu/devices.h"

#include <cstdio>

#include "tuner/gpu/nvml.h"

namespace ktune::gpu {
namespace {

int attribute(const CudaApi& api, CUdevice dev, CUdevice_attribute attr, const char* what) {
  int value = 0;
  check(api, api.cuDeviceGetAttribute(&value, attr, dev),
        std::string("cuDeviceGetAttribute(") + what + ")");
  return value;
}

}  // namespace

std::string DeviceProperties::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

std::string format_uuid(const unsigned char b[16]) {
  char buf[48];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                b[13], b[14], b[15]);
  return buf;
}

DeviceProperties query_device(const CudaApi& api, int ordinal, int cuda_version) {
  DeviceProperties d;
  d.ordinal = ordinal;
  d.cuda_version = cuda_version;
  CUdevice dev = 0;
  check(api, api.cuDeviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  char name[256] = {};
  check(api, api.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  d.name = name;
  CUuuid uuid{};
  check(api, api.cuDeviceGetUuid(&uuid, dev), "cuDeviceGetUuid");
  d.uuid = format_uuid(reinterpret_cast<const unsigned char*>(uuid.bytes));
  std::size_t total = 0;
  check(api, api.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem");
  d.total_memory = total;
#define KTUNE_ATTR(field, attr) d.field = attribute(api, dev, attr, #attr)
  KTUNE_ATTR(cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  KTUNE_ATTR(cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  KTUNE_ATTR(sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  KTUNE_ATTR(max_sm_clock_mhz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  KTUNE_ATTR(max_mem_clock_mhz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  KTUNE_ATTR(memory_bus_width, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  KTUNE_ATTR(l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  KTUNE_ATTR(smem_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  KTUNE_ATTR(smem_per_block_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  KTUNE_ATTR(smem_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  KTUNE_ATTR(max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  KTUNE_ATTR(max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  KTUNE_ATTR(max_blocks_per_sm, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  KTUNE_ATTR(regs_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  KTUNE_ATTR(regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  KTUNE_ATTR(warp_size, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  KTUNE_ATTR(max_block_dim[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  KTUNE_ATTR(max_block_dim[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  KTUNE_ATTR(max_block_dim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  KTUNE_ATTR(max_grid_dim[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  KTUNE_ATTR(max_grid_dim[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  KTUNE_ATTR(max_grid_dim[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
#undef KTUNE_ATTR
  d.max_sm_clock_mhz /= 1000;  // the driver reports kHz
  d.max_mem_clock_mhz /= 1000;
  NvmlDevice nv = NvmlDevice::open(d.uuid);
  if (nv.valid()) {
    // NVML's maxima are the boost clocks a measurement can actually reach.
    if (unsigned mhz = nv.max_sm_clock_mhz()) d.max_sm_clock_mhz = static_cast<int>(mhz);
    if (unsigned mhz = nv.max_mem_clock_mhz()) d.max_mem_clock_mhz = static_cast<int>(mhz);
  }
  d.driver_version = nvml_driver_version();
  return d;
}

std::vector<DeviceProperties> query_all_devices(const CudaApi& api, int cuda_version) {
  int count = 0;
  check(api, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  std::vector<DeviceProperties> out;
  for (int i = 0; i < count; ++i) out.push_back(query_device(api, i, cuda_version));
  return out;
}

}  // namespace ktune::gpu
