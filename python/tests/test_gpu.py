"""On a GPU (marker gpu; skipped without one): tune_kernel measuring for
real, run_kernel, and Kernel launched on PyTorch and CuPy arrays, checked
against the frameworks' own results."""
import json
import os

import numpy as np
import pytest

import ktune

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void vector_add(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
N = 1 << 20
PARAMS = {"block_size_x": [64, 128, 256, 512, 1024]}


def data():
    rng = np.random.default_rng(1)
    a = rng.random(N, dtype=np.float32)
    b = rng.random(N, dtype=np.float32)
    return a, b


def spec_file(tmp_path):
    (tmp_path / "vadd.cu").write_text(SOURCE)
    (tmp_path / "vadd.yaml").write_text(
        "kernel: {name: vector_add, source: vadd.cu}\n"
        "constants: {n: 1048576}\n"
        "problem_size: [n]\n"
        "tune_params: {block_size_x: [64, 128, 256, 512, 1024]}\n"
        "arguments:\n"
        "  - {name: c, type: float*, size: n, fill: zeros, output: true}\n"
        "  - {name: a, type: float*, size: n, fill: random}\n"
        "  - {name: b, type: float*, size: n, fill: random}\n"
        "  - {name: n, type: int32, value: n}\n")
    return str(tmp_path / "vadd.yaml")


def test_tune_kernel_measures_and_verifies(db):
    a, b = data()
    c = np.zeros_like(a)
    results, env = ktune.tune_kernel("vector_add", SOURCE, N, [c, a, b, np.int32(N)], PARAMS,
                                     answer=[a + b, None, None, None], quiet=True)
    assert sorted(r["block_size_x"] for r in results) == PARAMS["block_size_x"]
    assert all(r["ktune_status"] == "ok" and r["time"] > 0 and len(r["times"]) > 0 for r in results)
    assert env["ktune"]["replay"] is False and env["best_config"]["block_size_x"] in PARAMS["block_size_x"]
    status, out = ktune.cli("best", "--kernel", "vector_add", "--json", "--db", db, capture=True)
    assert status == 0 and json.loads(out)


def test_tune_kernel_flags_a_wrong_answer(db):
    a, b = data()
    results, _ = ktune.tune_kernel("vector_add", SOURCE, N, [np.zeros_like(a), a, b, np.int32(N)], PARAMS,
                                   answer=[a - b, None, None, None], quiet=True)
    assert all(r["ktune_status"] == "wrong_result" for r in results)


def test_tune_kernel_takes_tensors(db):
    torch = pytest.importorskip("torch")
    a, b = (torch.from_numpy(x).cuda() for x in data())
    results, _ = ktune.tune_kernel("vector_add", SOURCE, N, [torch.zeros_like(a), a, b, np.int32(N)], PARAMS,
                                   answer=[a + b, None, None, None], quiet=True)
    assert all(r["ktune_status"] == "ok" for r in results)


def test_run_kernel_returns_outputs(db):
    a, b = data()
    out = ktune.run_kernel("vector_add", SOURCE, N, [np.zeros_like(a), a, b, np.int32(N)], {"block_size_x": 256})
    np.testing.assert_array_equal(out[0], a + b)
    np.testing.assert_array_equal(out[1], a)
    assert out[3] == N


def test_kernel_on_torch_tensors(tmp_path, db):
    torch = pytest.importorskip("torch")
    spec = spec_file(tmp_path)
    assert ktune.cli("tune", spec, "--strategy", "brute_force", "--db", db, capture=True)[0] == 0
    k = ktune.Kernel(spec, db, quiet=True)
    choice = k.prepare({"n": N})
    assert choice["match"] == "exact device"
    a = torch.rand(N, device="cuda")
    b = torch.rand(N, device="cuda")
    c = torch.empty_like(a)
    k(c, a, b, N, problem={"n": N})
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
    # Another problem size: the spec's problem follows the constant.
    m = 1000
    c2 = torch.zeros(m, device="cuda")
    k(c2, a[:m], b[:m], m, problem={"n": m})
    torch.cuda.synchronize()
    assert torch.equal(c2, a[:m] + b[:m])
    with pytest.raises(ktune.BadInput, match="holds .*float64"):
        k(c.double(), a, b, N, problem={"n": N})
    with pytest.raises(ktune.BadInput, match="not on the GPU"):
        k(c.cpu(), a, b, N, problem={"n": N})
    with pytest.raises(ktune.BadInput, match="cannot hold"):
        k(c, a, b, 1 << 40, problem={"n": N})
    with pytest.raises(ktune.BadInput, match="takes 4 arguments"):
        k(c, a, b, problem={"n": N})


def test_kernel_on_cupy_arrays(tmp_path, db):
    cupy = pytest.importorskip("cupy")
    spec = spec_file(tmp_path)
    k = ktune.Kernel(spec, quiet=True)  # no results: the spec's defaults
    a = cupy.random.rand(N, dtype=cupy.float32)
    b = cupy.random.rand(N, dtype=cupy.float32)
    c = cupy.empty_like(a)
    stream = cupy.cuda.Stream()
    with stream:
        k(c, a, b, N, problem={"n": N})
    stream.synchronize()
    assert bool((c == a + b).all())


@pytest.mark.parametrize("causal, d", [(False, 128), (True, 64)])
def test_attention_template_on_torch_tensors(root, db, causal, d):
    """The attention template through Kernel (the spec's defaults, no tuning) on
    (B, H, S, D) and on (B, S, H, D) tensors, against PyTorch's fp32 attention."""
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("attention is written for sm_90a")
    spec = root / "templates" / "attention" / ("attention_causal.yaml" if causal else "attention.yaml")
    k = ktune.Kernel(spec, quiet=True)
    b, h, s = 2, 3, 333  # a last tile of queries and keys that is partial
    torch.manual_seed(1)
    q, kk, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk.float(), v.float(), is_causal=causal)
    problem = {"B": b, "H": h, "S": s, "D": d}
    out = torch.empty_like(q)
    k(out, q, kk, v, b, h, s, d, d ** -0.5, *q.stride()[:3], *out.stride()[:3], problem=problem)
    # (B, S, H, D) buffers: the same values through the kernel's strides
    qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, kk, v))
    out_t = torch.empty_like(qt)
    strides = (qt.stride(0), qt.stride(2), qt.stride(1))
    k(out_t, qt, kt, vt, b, h, s, d, d ** -0.5, *strides, out_t.stride(0), out_t.stride(2), out_t.stride(1),
      problem=problem)
    torch.cuda.synchronize()
    assert torch.allclose(out.float(), ref, atol=4e-3, rtol=1e-2)
    assert torch.allclose(out_t.transpose(1, 2).float(), ref, atol=4e-3, rtol=1e-2)
    assert not torch.allclose(out.float(), ref.flip(2), atol=4e-3, rtol=1e-2)  # the check can fail
