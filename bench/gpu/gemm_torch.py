"""cuBLAS's bf16 GEMM on this GPU, the reference point of the gemm templates: C = A B
with A, B bf16 (N x N, row-major), fp32 accumulation, C in bf16 (torch.mm) and in
fp32 (torch.mm with out_dtype, the templates' own output). Timed two ways: the median
of 20 calls after 5 of warm-up, each alone between its events (cuda_timing.median_ms),
and the median per call of samples of back-to-back calls lasting 20 ms or more, as
ktune's hot mode times the templates (cuda_timing.median_batched_ms): under sustained
load the H200 lowers its clock, so only the second compares like with like. Prints one
line per size and output type, and writes them as JSON to the file given.

    python3 bench/gpu/gemm_torch.py OUT.json [N ...]
"""
import json
import sys

import torch

from cuda_timing import median_batched_ms, median_ms


def main():
    out = sys.argv[1]
    sizes = [int(n) for n in sys.argv[2:]] or [4096, 8192]
    rows = []
    for n in sizes:
        a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        for name, call in (("bf16", lambda: torch.mm(a, b)), ("fp32", lambda: torch.mm(a, b, out_dtype=torch.float32))):
            ms, hot = median_ms(call), median_batched_ms(call)
            rows.append({"N": n, "out": name, "ms": ms, "tflops": 2 * n**3 / ms / 1e9,
                         "hot_ms": hot, "hot_tflops": 2 * n**3 / hot / 1e9})
            print(f"cuBLAS bf16 GEMM {n}^3, {name} out: alone {ms:.4f} ms, {rows[-1]['tflops']:.1f} TFLOP/s; "
                  f"back to back {hot:.4f} ms, {rows[-1]['hot_tflops']:.1f} TFLOP/s")
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "gemm": rows}, f, indent=1)


if __name__ == "__main__":
    main()
