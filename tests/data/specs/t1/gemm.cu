// Stand-in for BAT's GEMM kernel (same name and parameters): C = A * B with a
// block of MDIMC x NDIMC threads computing an MWG x NWG tile of C.
#ifndef MWG
#define MWG 16
#define NWG 16
#define MDIMC 16
#define NDIMC 16
#endif

extern "C" __global__ void gemm_fast(int kSizeM, int kSizeN, int kSizeK, const float* agm, const float* bgm,
                                     float* cgm) {
  for (int m = threadIdx.x; m < MWG; m += MDIMC) {
    for (int n = threadIdx.y; n < NWG; n += NDIMC) {
      int row = blockIdx.x * MWG + m, col = blockIdx.y * NWG + n;
      if (row >= kSizeM || col >= kSizeN) continue;
      float acc = 0.0f;
      for (int k = 0; k < kSizeK; ++k) acc += agm[k * kSizeM + row] * bgm[k * kSizeN + col];
      cgm[col * kSizeM + row] = acc;
    }
  }
}
