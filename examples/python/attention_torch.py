"""ktune from PyTorch: attention. Tunes the attention template for this GPU and the
model's problem, then runs the tuned kernel as a module's forward pass on PyTorch
tensors, checked against torch's scaled_dot_product_attention and timed beside its
cuDNN and FlashAttention-2 backends.

    python3 examples/python/attention_torch.py [--db attention.db] [--batch 4 --heads 32 --seq 4096 --dim 128] [--causal]

1. `ktune.cli("tune", ...)` tunes templates/attention (an H100 or H200: the kernel is
   written for sm_90a) with ktune's default strategy at this problem, every
   configuration verified against the spec's fp32 reference; the measurements land in
   the database, kept apart per problem (S, B * H, D).
2. `ktune.Kernel` picks the tuned configuration for this GPU and problem from that
   database and launches it on PyTorch's current stream, on (B, H, S, D) tensors, and
   on (B, S, H, D) ones through the kernel's strides.
"""
import argparse
import os

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import ktune

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.normpath(os.path.join(HERE, "..", "..", "templates", "attention"))


class Attention(torch.nn.Module):
    """softmax(Q K^T / sqrt(D)) V by the tuned kernel, bf16, for (B, H, S, D) tensors or,
    with `heads_second=False`, (B, S, H, D) ones."""

    def __init__(self, db, causal=False):
        super().__init__()
        spec = os.path.join(TEMPLATES, "attention_causal.yaml" if causal else "attention.yaml")
        self.kernel = ktune.Kernel(spec, db)

    def forward(self, q, k, v, heads_second=True):
        if heads_second:
            b, h, s, d = q.shape
        else:
            b, s, h, d = q.shape
        out = torch.empty_like(q)
        # element strides per batch, head and position (the same for Q, K and V)
        sb, sh, ss = (q.stride(0), q.stride(1), q.stride(2)) if heads_second else (q.stride(0), q.stride(2), q.stride(1))
        osb, osh, oss = (out.stride(0), out.stride(1), out.stride(2)) if heads_second else (out.stride(0), out.stride(2), out.stride(1))
        self.kernel(out, q, k, v, b, h, s, d, d ** -0.5, sb, sh, ss, osb, osh, oss,
                    problem={"B": b, "H": h, "S": s, "D": d})
        return out


def milliseconds(fn, reps=20):
    for _ in range(3):
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
    ap.add_argument("--db", default="attention_tuned.db")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    args = ap.parse_args()
    b, h, s, d = args.batch, args.heads, args.seq, args.dim

    spec = os.path.join(TEMPLATES, "attention_causal.yaml" if args.causal else "attention.yaml")
    sets = [a for n, v in (("B", b), ("H", h), ("S", s), ("D", d)) for a in ("--set", f"{n}={v}")]
    status = ktune.cli("tune", spec, *sets, "--db", args.db)
    if status != 0:
        raise SystemExit(f"ktune tune exited with {status}")

    attention = Attention(args.db, args.causal)
    print("configuration chosen:", attention.kernel.prepare({"B": b, "H": h, "S": s, "D": d})["text"])
    torch.manual_seed(0)
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    reference = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=args.causal)
    out = attention(q, k, v)
    err = (out.float() - reference).abs().max().item()
    # (B, S, H, D) tensors, the same values: the kernel reads them through its strides
    out_bshd = attention(*(x.transpose(1, 2).contiguous() for x in (q, k, v)), heads_second=False)
    err_bshd = (out_bshd.transpose(1, 2).float() - reference).abs().max().item()
    torch.cuda.synchronize()
    print(f"max |ktune - PyTorch fp32|: (B, H, S, D) {err:.2e}, (B, S, H, D) {err_bshd:.2e}")
    assert torch.allclose(out.float(), reference, atol=4e-3, rtol=1e-2)
    assert torch.allclose(out_bshd.transpose(1, 2).float(), reference, atol=4e-3, rtol=1e-2)

    flop = 4 * b * h * s * s * d / (2 if args.causal else 1)
    rows = [("ktune.Kernel (tuned)", milliseconds(lambda: attention(q, k, v)))]
    for name, backend in (("SDPA, cuDNN", SDPBackend.CUDNN_ATTENTION), ("SDPA, FlashAttention-2", SDPBackend.FLASH_ATTENTION)):
        with sdpa_kernel(backend):
            rows.append((name, milliseconds(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=args.causal))))
    print(f"{'forward pass':26} {'ms':>8} {'TFLOP/s':>8}")
    for name, ms in rows:
        print(f"{name:26} {ms:8.4f} {flop / ms / 1e9:8.1f}")


if __name__ == "__main__":
    main()
