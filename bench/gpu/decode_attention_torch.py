"""The reference points of the decode_attention template, measured on this GPU:
PyTorch's scaled_dot_product_attention for one query token per sequence on a KV
cache gathered from the same paged layout (bf16, grouped-query heads through
enable_gqa), and the device-to-device copy bandwidth (torch's copy_ of 2 GiB), and
per problem of a copy of its K and V bytes alone (timed back to back as ktune's hot
mode times a kernel: the physical limit at that size, where launch and latency weigh).

GB/s count the K and V bytes of the cached tokens, as the template's metric
does; the gather itself is not timed. Median of 20 calls after 5 of warm-up,
CUDA events. Writes JSON to the file given.

    python3 bench/gpu/decode_attention_torch.py OUT.json Hkv G D B,ctx [B,ctx ...]
"""
import json
import sys

import torch
import torch.nn.functional as F

from cuda_timing import median_batched_ms, median_ms

PAGE = 16


def main():
    out, hkv, g, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    problems = [tuple(int(x) for x in p.split(",")) for p in sys.argv[5:]]
    src = torch.empty(2**30, device="cuda", dtype=torch.bfloat16).normal_()
    dst = torch.empty_like(src)
    copy_ms = median_ms(lambda: dst.copy_(src))
    copy_gbs = 2 * src.numel() * 2 / copy_ms / 1e6
    del src, dst
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; copy {copy_gbs:.0f} GB/s")
    rows = []
    for b, ctx in problems:
        max_pages = (ctx + PAGE - 1) // PAGE
        pages = b * max_pages
        k_cache = torch.randn(pages, PAGE, hkv, d, device="cuda", dtype=torch.bfloat16)
        v_cache = torch.randn_like(k_cache)
        table = (torch.arange(pages, device="cuda", dtype=torch.int64) * 7919 % pages).view(b, max_pages)
        # (B, Hkv, ctx, D): the tokens of each sequence in order, through the block table
        k = k_cache[table].reshape(b, max_pages * PAGE, hkv, d)[:, :ctx].transpose(1, 2).contiguous()
        v = v_cache[table].reshape(b, max_pages * PAGE, hkv, d)[:, :ctx].transpose(1, 2).contiguous()
        q = torch.randn(b, hkv * g, 1, d, device="cuda", dtype=torch.bfloat16)
        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
        kv_bytes = 2 * b * ctx * hkv * d * 2
        gbs = kv_bytes / ms / 1e6
        # The same bytes copied (read and written, counted as the 2 GiB copy is)
        src = torch.empty(kv_bytes // 2, device="cuda", dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        same_ms = median_batched_ms(lambda: dst.copy_(src))
        same_gbs = 2 * kv_bytes / same_ms / 1e6
        del src, dst
        rows.append({"B": b, "ctx": ctx, "sdpa_ms": ms, "sdpa_gbs": gbs, "copy_same_ms": same_ms,
                     "copy_same_gbs": same_gbs})
        print(f"B={b} ctx={ctx}: SDPA {ms:.4f} ms, {gbs:.0f} GB/s; copy of the same bytes {same_gbs:.0f} GB/s")
        del k_cache, v_cache, k, v
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "copy_gbs": copy_gbs,
                   "Hkv": hkv, "G": g, "D": d, "decode": rows}, f, indent=1)


if __name__ == "__main__":
    main()
