// A kernel whose tile and element type are template parameters, instantiated
// by name expression: scale<4, float>.
template <int TILE, typename T>
__global__ void scale(T* data, T factor, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * TILE;
#pragma unroll
  for (int k = 0; k < TILE; ++k) {
    if (base + k < n) data[base + k] *= factor;
  }
}
