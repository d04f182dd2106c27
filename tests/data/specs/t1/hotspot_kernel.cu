// Stand-in for BAT's hotspot kernel (same name and parameters): one explicit
// step of the thermal simulation on a 4096 x 4096 grid.
#define GRID 4096

extern "C" __global__ void calculate_temp(const float* power, const float* temp, float* temp_dst, float Rx_1,
                                          float Ry_1, float Rz_1, float step_div_cap) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  for (; y < GRID; y += gridDim.y * blockDim.y) {
    if (x >= GRID) return;
    int i = y * GRID + x;
    float c = temp[i];
    float n = temp[y > 0 ? i - GRID : i], s = temp[y < GRID - 1 ? i + GRID : i];
    float w = temp[x > 0 ? i - 1 : i], e = temp[x < GRID - 1 ? i + 1 : i];
    temp_dst[i] = c + step_div_cap * (power[i] + (s + n - 2.0f * c) * Ry_1 + (e + w - 2.0f * c) * Rx_1 +
                                      (80.0f - c) * Rz_1);
  }
}
