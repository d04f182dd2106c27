// Test kernel for pip_t1.json, written for ktune's tests: marks the points
// that lie inside a polygon of VERTEX_COUNT vertices (even-odd rule) and
// counts them. Tunable parameters and BenchmarkConfig entries arrive as -D.
#ifndef threads_x
#define threads_x 128
#endif
#ifndef points_per_thread
#define points_per_thread 1
#endif
#ifndef edge_rule
#define edge_rule 0
#endif
#ifndef stage_vertices
#define stage_vertices 0
#endif
#ifndef VERTEX_COUNT
#define VERTEX_COUNT 720
#endif
#ifndef INSIDE_MARK
#define INSIDE_MARK 1
#endif

__device__ inline bool crosses(float px, float py, float ax, float ay, float bx, float by) {
  if ((ay > py) == (by > py)) return false;
#if edge_rule == 0
  return px < (bx - ax) * (py - ay) / (by - ay) + ax;
#elif edge_rule == 1
  return (px - ax) * (by - ay) < (bx - ax) * (py - ay) == (by > ay);
#else
  float t = (py - ay) / (by - ay);
  return px < fmaf(t, bx - ax, ax);
#endif
}

extern "C" __global__ void mark_inside(int* inside_flags, const float* point_xy, const float* polygon_xy,
                                       int* inside_total, int num_points) {
#if stage_vertices
  __shared__ float poly[2 * VERTEX_COUNT];
  for (int j = threadIdx.x; j < 2 * VERTEX_COUNT; j += threads_x) poly[j] = polygon_xy[j];
  __syncthreads();
#else
  const float* poly = polygon_xy;
#endif
  int found = 0;
  const int first = blockIdx.x * threads_x * points_per_thread + threadIdx.x;
#pragma unroll
  for (int k = 0; k < points_per_thread; ++k) {
    const int i = first + k * threads_x;
    if (i >= num_points) break;
    const float px = point_xy[2 * i], py = point_xy[2 * i + 1];
    bool in = false;
    for (int j = 0, prev = VERTEX_COUNT - 1; j < VERTEX_COUNT; prev = j++)
      in ^= crosses(px, py, poly[2 * j], poly[2 * j + 1], poly[2 * prev], poly[2 * prev + 1]);
    inside_flags[i] = in ? INSIDE_MARK : 0;
    found += in;
  }
  if (found) atomicAdd(inside_total, found);
}
