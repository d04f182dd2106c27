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
