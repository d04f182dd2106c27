// A five-point Jacobi step on a width x height grid of floats (row-major):
// x_new = the mean of x_old's four neighbours, the border left as it is. The
// signature and parameters are those of Kernel Tuner's stencil example
// (block_size_x by block_size_y threads, one point each), so that its script
// translates one to one (docs/from-kernel-tuner.md). The grid's size is the
// spec's width and height (as the example's kernel defines its own).
#ifndef width
#define width 4096
#endif
#ifndef height
#define height 2048
#endif

extern "C" __global__ void stencil_kernel(float* x_new, const float* x_old) {
  const int x = blockIdx.x * block_size_x + threadIdx.x;
  const int y = blockIdx.y * block_size_y + threadIdx.y;
  if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) return;
  const int i = y * width + x;
  x_new[i] = 0.25f * (x_old[i - 1] + x_old[i + 1] + x_old[i - width] + x_old[i + width]);
}
