extern "C" __global__ void k(float* x) { x[threadIdx.x] = block_size_x; }
