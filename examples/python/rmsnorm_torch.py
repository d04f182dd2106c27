"""ktune from PyTorch: tune the RMSNorm template on tensors, then use the tuned
kernel in a model's forward pass, checked and timed against PyTorch's own.

    python3 examples/python/rmsnorm_torch.py [--db tuned.db] [--evaluations 60]

1. `ktune.tune_kernel` (Kernel Tuner's call) tunes templates/rmsnorm/rmsnorm.cu
   on a 8192 x 8192 float tensor, verified against PyTorch's result, with
   ktune's default strategy; every measurement lands in the database.
2. `ktune.Kernel` picks the tuned configuration for this GPU from that
   database (the template's spec names the same kernel and parameters) and
   runs as a module's forward pass on PyTorch's current stream.
"""
import argparse
import os

import numpy as np
import torch

import ktune

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.normpath(os.path.join(HERE, "..", "..", "templates", "rmsnorm"))
ROWS, COLS, EPS = 8192, 8192, 1e-6  # the template's ROW_LEN and EPS


def reference(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


class RMSNorm(torch.nn.Module):
    """RMS normalisation by the tuned kernel (rows of COLS floats)."""

    def __init__(self, weight, db):
        super().__init__()
        self.weight = torch.nn.Parameter(weight, requires_grad=False)
        self.kernel = ktune.Kernel(os.path.join(TEMPLATE, "rmsnorm.yaml"), db)

    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty_like(x)
        self.kernel(out, x, self.weight, rows, cols, problem={"rows": rows, "cols": cols})
        return out


def milliseconds(fn, reps=50):
    for _ in range(5):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / reps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="rmsnorm_tuned.db")
    ap.add_argument("--evaluations", type=int, default=60)
    args = ap.parse_args()

    torch.manual_seed(0)
    x = torch.randn(ROWS, COLS, device="cuda")
    w = torch.rand(COLS, device="cuda")
    tune_params = {
        "block_size_x": [32, 64, 128, 256, 512, 1024],
        "rows_per_block": [1, 2, 4, 8, 16, 32],
        "vector_width": [1, 2, 4],
        "cache_row": [0, 1],
        "streaming_stores": [0, 1],
    }
    restrictions = [
        "block_size_x // rows_per_block >= 32",
        f"{COLS} % (block_size_x // rows_per_block * vector_width) == 0",
        f"cache_row == 0 or {COLS} // (block_size_x // rows_per_block) <= 64",
        f"cache_row == 0 or block_size_x * ({COLS} // (block_size_x // rows_per_block) + 32) <= 65536",
    ]
    results, env = ktune.tune_kernel(
        "rmsnorm", os.path.join(TEMPLATE, "rmsnorm.cu"), ROWS,
        [torch.zeros_like(x), x, w, np.int32(ROWS), np.int32(COLS)], tune_params,
        grid_div_x=["rows_per_block"], restrictions=restrictions,
        compiler_options=["-std=c++17", f"-DROW_LEN={COLS}"],
        answer=[reference(x, w), None, None, None, None], atol=1e-4,
        metrics={"GB/s": f"2 * 4 * {ROWS} * {COLS} / (time_ms * 1e6)"}, objective="GB/s",
        objective_higher_is_better=True, strategy="portfolio",
        strategy_options={"max_fevals": args.evaluations}, db=args.db)
    ok = [r for r in results if r["ktune_status"] == "ok"]
    print(f"tuned: {len(results)} evaluated, {len(ok)} correct; best {env['best_config']}")

    norm = RMSNorm(w, args.db)
    print("configuration chosen:", norm.kernel.prepare({"rows": ROWS, "cols": COLS})["text"])
    y = norm(x)
    torch.cuda.synchronize()
    err = (y - reference(x, w)).abs().max().item()
    print(f"max |ktune - PyTorch| = {err:.2e}")
    assert err < 1e-4

    bytes_moved = 2 * 4 * ROWS * COLS
    rows = [("ktune.Kernel (tuned)", milliseconds(lambda: norm(x))),
            ("torch.nn.functional.rms_norm", milliseconds(lambda: torch.nn.functional.rms_norm(x, (COLS,), w, EPS))),
            ("PyTorch, written out", milliseconds(lambda: reference(x, w)))]
    print(f"{'forward pass':32} {'ms':>8} {'GB/s':>8}")
    for name, ms in rows:
        print(f"{name:32} {ms:8.4f} {bytes_moved / ms / 1e6:8.1f}")


if __name__ == "__main__":
    main()
