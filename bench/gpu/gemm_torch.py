"""cuBLAS's bf16 GEMM on this GPU, the reference point of the gemm templates: C = A B
with A, B bf16 (N x N, row-major), fp32 accumulation, C in bf16 (torch.mm) and in
fp32 (torch.mm with out_dtype, the templates' own output). The median of 20 timed
calls after 5 of warm-up (cuda_timing.median_ms). Prints one line per size and
output type, and writes them as JSON to the file given.

    python3 bench/gpu/gemm_torch.py OUT.json [N ...]
"""
import json
import sys

import torch

from cuda_timing import median_ms


def main():
    out = sys.argv[1]
    sizes = [int(n) for n in sys.argv[2:]] or [4096, 8192]
    rows = []
    for n in sizes:
        a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        for name, call in (("bf16", lambda: torch.mm(a, b)), ("fp32", lambda: torch.mm(a, b, out_dtype=torch.float32))):
            ms = median_ms(call)
            rows.append({"N": n, "out": name, "ms": ms, "tflops": 2 * n**3 / ms / 1e9})
            print(f"cuBLAS bf16 GEMM {n}^3, {name} out: {ms:.4f} ms, {rows[-1]['tflops']:.1f} TFLOP/s")
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "gemm": rows}, f, indent=1)


if __name__ == "__main__":
    main()
