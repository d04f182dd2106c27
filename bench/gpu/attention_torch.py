"""The reference points of the attention templates, measured on this GPU: PyTorch's
scaled_dot_product_attention with each of its CUDA backends (cuDNN, FlashAttention-2,
memory-efficient), bf16, forward, (B, H, S, D) layout, and cuBLAS bf16 GEMMs.

Per problem and backend: the median of 20 timed calls after 5 of warm-up, each timed
with CUDA events; TFLOP/s count 4 B H S^2 D (half of it causal), as the templates'
metrics do. Prints one line per problem and writes the figures as JSON to the file
given, so bench/gpu/attention.sh can set ktune's tuned kernels beside them.

    python3 bench/gpu/attention_torch.py OUT.json [B,H,S,D ...]
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import median_ms

PROBLEMS = [(4, 32, 4096, 128), (2, 32, 8192, 128), (1, 16, 16384, 128), (8, 16, 2048, 64)]
BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash2": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def main():
    out = sys.argv[1]
    problems = [tuple(int(x) for x in p.split(",")) for p in sys.argv[2:]] or PROBLEMS
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    rows = []
    for b, h, s, d in problems:
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        for causal in (False, True):
            flop = 4 * b * h * s * s * d / (2 if causal else 1)
            row = {"B": b, "H": h, "S": s, "D": d, "causal": causal}
            for name, backend in BACKENDS.items():
                try:
                    with sdpa_kernel(backend):
                        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                    row[name] = {"ms": ms, "tflops": flop / ms / 1e9}
                except RuntimeError as e:  # a backend that refuses the problem
                    row[name] = {"error": str(e).splitlines()[0][:200]}
            rows.append(row)
            cells = " ".join(f"{n} {row[n]['tflops']:6.1f}" if "tflops" in row[n] else f"{n} -" for n in BACKENDS)
            print(f"B={b} H={h} S={s} D={d} causal={int(causal)}: TFLOP/s {cells}")
    gemm = {}
    for n in (4096, 8192):
        a, bm = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        ms = median_ms(lambda: a @ bm)
        gemm[n] = {"ms": ms, "tflops": 2 * n**3 / ms / 1e9}
        print(f"cuBLAS bf16 GEMM {n}^3: {gemm[n]['tflops']:.1f} TFLOP/s")
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "attention": rows, "gemm_bf16": gemm}, f, indent=1)


if __name__ == "__main__":
    main()
