// Stand-in for BAT's pnpoly kernel (same name and parameters): marks each
// point that lies inside the polygon (crossing-number test). Tunable
// parameters arrive as -D defines.
#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef tile_size
#define tile_size 1
#endif
#define VERTICES 600

extern "C" __global__ void cn_pnpoly(int* bitmap, const float2* points, const float2* vertex_xy, int n) {
  int first = blockIdx.x * block_size_x * tile_size + threadIdx.x;
  for (int k = 0; k < tile_size; ++k) {
    int i = first + k * block_size_x;
    if (i >= n) return;
    float2 p = points[i];
    int c = 0;
    for (int j = 0, prev = VERTICES - 1; j < VERTICES; prev = j++) {
      float2 a = vertex_xy[j], b = vertex_xy[prev];
      if (((a.y > p.y) != (b.y > p.y)) && (p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x)) c = !c;
    }
    bitmap[i] = c;
  }
}
