"""Host time per launch of a tuned kernel from Python (ktune.Kernel) against
a plain CuPy RawKernel launch of the same source and configuration.

Each way launches a 1-element vector_add LAUNCHES times back to back on one
stream, then synchronizes; the figure is host wall time per launch (the GPU
work is a few microseconds, so it is the launch path that is timed). Run:
    python3 bench/python/launch_overhead.py [LAUNCHES]
"""
import os
import sys
import tempfile
import time

import cupy
import torch

import ktune

SOURCE = r"""
extern "C" __global__ void vector_add(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
LAUNCHES = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
N = 1


def per_launch(fn, sync):
    for _ in range(200):
        fn()
    sync()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(LAUNCHES):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / LAUNCHES)
    return best * 1e6


with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "vadd.cu"), "w") as f:
        f.write(SOURCE)
    with open(os.path.join(d, "vadd.yaml"), "w") as f:
        f.write("kernel: {name: vector_add, source: vadd.cu}\nconstants: {n: 1}\nproblem_size: [n]\n"
                "tune_params: {block_size_x: [256]}\narguments:\n"
                "  - {name: c, type: float*, size: n, fill: zeros, output: true}\n"
                "  - {name: a, type: float*, size: n, fill: random}\n"
                "  - {name: b, type: float*, size: n, fill: random}\n"
                "  - {name: n, type: int32, value: n}\n")
    k = ktune.Kernel(os.path.join(d, "vadd.yaml"), quiet=True)
    problem = {"n": N}
    k.prepare(problem)

    ta, tb, tc = (torch.rand(N, device="cuda") for _ in range(3))
    ca, cb, cc = (cupy.random.rand(N, dtype=cupy.float32) for _ in range(3))
    raw = cupy.RawKernel(SOURCE, "vector_add", options=("-Dblock_size_x=256",))
    stream = cupy.cuda.get_current_stream()
    ts = torch.cuda.current_stream().cuda_stream
    rows = [
        ("cupy.RawKernel, CuPy arrays", per_launch(lambda: raw((1,), (256,), (cc, ca, cb, cupy.int32(N))),
                                                   stream.synchronize)),
        ("ktune.Kernel, torch tensors (DLPack)", per_launch(lambda: k(tc, ta, tb, N, problem=problem),
                                                            torch.cuda.synchronize)),
        ("ktune.Kernel, CuPy arrays (DLPack)", per_launch(lambda: k(cc, ca, cb, N, problem=problem),
                                                          stream.synchronize)),
        ("ktune.Kernel, device pointers, stream given",
         per_launch(lambda: k(tc.data_ptr(), ta.data_ptr(), tb.data_ptr(), N, problem=problem, stream=ts),
                    torch.cuda.synchronize)),
    ]
    base = rows[0][1]
    print(f"{'launch path':48} {'us/launch':>10} {'vs RawKernel':>13}")
    for name, us in rows:
        print(f"{name:48} {us:10.2f} {us / base:12.2f}x")
