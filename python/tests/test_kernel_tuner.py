"""tune_kernel and run_kernel without a GPU: argument conversion, replays of a
Kernel Tuner cache, Kernel Tuner's result shapes, and refusals."""
import json
import os

import numpy as np
import pytest

import ktune

N = 67108864  # the problem size of examples/data/vector_add_h100.json
PARAMS = {
    "block_size_x": [64, 128, 256, 512, 1024],
    "items_per_thread": [1, 2, 4, 8, 16],
    "vector_width": [1, 2, 4],
    "unroll": [0, 1],
    "grid_stride": [0, 1],
}
RESTRICTIONS = [
    "items_per_thread * vector_width <= 32",
    "unroll == 1 or items_per_thread > 1",
    "unroll == 0 or block_size_x * (2 * items_per_thread * vector_width + 24) <= 65536",
]


def vector_add_args():
    # Never read in a replay: views of one element stand for 2^26 floats.
    buf = np.broadcast_to(np.float32(0), (N,))
    return [buf, buf, buf, np.int32(N)]


def replay(root, **kw):
    return ktune.tune_kernel(
        "vector_add", str(root / "templates/vector_add/vector_add.cu"), N, vector_add_args(), PARAMS,
        grid_div_x=["block_size_x", "items_per_thread"], restrictions=RESTRICTIONS,
        compiler_options=["-std=c++17"], cache=str(root / "examples/data/vector_add_h100.json"),
        simulation_mode=True, quiet=True, **kw)


def test_version_and_cli(db):
    status, out = ktune.cli("--version", capture=True)
    assert status == 0 and out.strip() == ktune.__version__
    assert ktune.cli("devices", "--bogus", capture=True)[0] == 2


def test_replay_brute_force_finds_the_cli_best(root, db):
    results, env = replay(root, strategy="brute_force")
    # The command line, exhaustive over the same recording, ranks by time too.
    status, out = ktune.cli("tune", str(root / "templates/vector_add/vector_add.yaml"), "--simulate",
                            str(root / "examples/data/vector_add_h100.json"), "--strategy", "brute_force",
                            "--objective", "time", "--json", "--db", db + ".cli", capture=True)
    assert status == 0
    cli_best = json.loads(out)["best"][0]["config"]
    assert env["best_config"] == cli_best
    valid = [r for r in results if isinstance(r["time"], float)]
    fastest = min(valid, key=lambda r: r["time"])
    assert {k: fastest[k] for k in PARAMS} == cli_best
    # Kernel Tuner's shapes: one dict per configuration with its parameters,
    # time (ms), times and the timing keys; env with the device and best.
    assert len({tuple(r[k] for k in PARAMS) for r in results}) == len(results)
    for key in ("time", "times", "compile_time", "benchmark_time", "framework_time", "timestamp"):
        assert key in fastest
    assert env["device_name"] == "NVIDIA H100 80GB HBM3"
    assert env["simulation_mode"] is True
    assert env["ktune"]["replay"] is True


def test_replay_is_stored_in_the_database(root, db):
    replay(root, strategy="random_sample", strategy_options={"max_fevals": 20}, seed=3)
    status, out = ktune.cli("results", "--kernel", "vector_add", "--json", "--db", db, capture=True)
    assert status == 0
    rows = json.loads(out)
    assert len(rows) >= 20 and all(r["replay"] for r in rows)


def test_budget_and_seed_from_strategy_options(root, db):
    results, env = replay(root, strategy="random_sample", strategy_options={"max_fevals": 15}, seed=5)
    assert env["ktune"]["evaluations"] == 15
    again, _ = replay(root, strategy="random_sample", strategy_options={"max_fevals": 15}, seed=5)
    assert [tuple(r[k] for k in PARAMS) for r in results] == [tuple(r[k] for k in PARAMS) for r in again]


def test_python_metrics_are_computed_on_results(root, db):
    metrics = {"GB/s": lambda p: 3 * 4 * N / (p["time"] * 1e6)}
    results, _ = replay(root, strategy="random_sample", strategy_options={"max_fevals": 10}, metrics=metrics)
    ok = [r for r in results if isinstance(r["time"], float)]
    assert ok and all(r["GB/s"] == pytest.approx(12 * N / (r["time"] * 1e6)) for r in ok)


def test_string_metric_objective(root, db):
    results, env = replay(root, strategy="brute_force", metrics={"GB/s": "3 * 4 * 67108864 / (time_ms * 1e6)"},
                          objective="GB/s", objective_higher_is_better=True)
    ok = [r for r in results if isinstance(r["time"], float)]
    best = max(ok, key=lambda r: r["GB/s"])
    assert {k: best[k] for k in PARAMS} == env["best_config"]


@pytest.mark.parametrize("change, words", [
    ({"lang": "OpenCL"}, "lang"),
    ({"verify": lambda a, b, atol=None: True}, "verify"),
    ({"texmem_args": {"t": np.zeros(4)}}, "texmem_args"),
    ({"smem_args": {"size": lambda p: p["block_size_x"] * 4}}, "smem_args"),
    ({"objective": "GB/s", "metrics": {"GB/s": lambda p: 1.0}}, "objective"),
    ({"simulation_mode": True, "cache": None}, "simulation_mode"),
])
def test_refusals_name_the_option(root, db, change, words):
    kw = dict(cache=str(root / "examples/data/vector_add_h100.json"), simulation_mode=True, quiet=True)
    kw.update(change)
    with pytest.raises(ktune.BadInput, match=words):
        ktune.tune_kernel("vector_add", str(root / "templates/vector_add/vector_add.cu"), N, vector_add_args(),
                          PARAMS, **kw)


def test_python_int_argument_is_refused(root, db):
    args = vector_add_args()[:3] + [N]
    with pytest.raises(ktune.BadInput, match="NumPy scalar"):
        ktune.tune_kernel("vector_add", str(root / "templates/vector_add/vector_add.cu"), N, args, PARAMS,
                          cache=str(root / "examples/data/vector_add_h100.json"), simulation_mode=True)


def test_argument_types_reach_the_spec(tmp_path):
    from ktune.kernel_tuner import _Translation

    t = _Translation(str(tmp_path))
    t.arguments([np.zeros(3, np.float16), np.zeros(2, np.complex64), np.arange(4, dtype=np.uint64),
                 np.float64(2.5), np.int8(-3)], [None, None, np.arange(4), None, None], 1e-3, None, data=True)
    args = t.spec["arguments"]
    assert [a["type"] for a in args] == ["half*", "float2*", "uint64*", "double", "int8"]
    assert args[1]["size"] == 2 and args[3]["value"] == 2.5 and args[4]["value"] == -3
    assert args[2]["output"] is True and t.spec["verify"]["atol"] == 1e-3
    assert np.fromfile(args[2]["path"], np.uint64).tolist() == [0, 1, 2, 3]
    with open(t.spec["verify"]["reference"]["file"], "rb") as f:
        assert np.frombuffer(f.read(), np.uint64).tolist() == [0, 1, 2, 3]


def test_torch_and_cupy_arrays_convert(tmp_path):
    from ktune._arrays import dtype_of, host_array, spec_type

    torch = pytest.importorskip("torch", reason="PyTorch is not installed here")
    t = torch.arange(6, dtype=torch.bfloat16)
    h = host_array(t)
    assert spec_type(dtype_of(h), "t") == "bf16" and h.dtype == np.uint16 and h.size == 6
    assert host_array(torch.ones(3, dtype=torch.float32)).tolist() == [1.0, 1.0, 1.0]


def test_kernel_chooses_offline(root):
    k = ktune.Kernel(str(root / "templates/vector_add/vector_add.yaml"),
                     str(root / "examples/data/vector_add_h100.json"), quiet=True)
    choice = k.choose({"n": N}, device_name="NVIDIA H100 80GB HBM3", compute_capability=90)
    assert choice["match"] == "exact device"
    assert [p[0] for p in k.parameters] == ["c", "a", "b", "n"]
    other = k.choose({"n": N}, device_name="NVIDIA H200", compute_capability=90)
    assert other["match"] == "same compute capability"


def test_empty_array_and_numpy_problem_size(tmp_path):
    from ktune.kernel_tuner import _Translation, _plain

    t = _Translation(str(tmp_path))
    t.arguments([np.zeros(0, np.float32), np.ones(2, np.float32)], None, 1e-6, None, data=True)
    assert t.spec["arguments"][0] == {"name": "arg0", "type": "float*", "size": 1, "fill": "zeros"}
    assert json.dumps(_plain((np.int32(3), np.int64(4)))) == "[3, 4]"


def test_function_restriction_is_the_same_space_as_its_string(root, db):
    def key(results):
        return sorted(tuple(r[k] for k in PARAMS) for r in results)

    by_function, _ = ktune.tune_kernel(
        "vector_add", str(root / "templates/vector_add/vector_add.cu"), N, vector_add_args(), PARAMS,
        restrictions=RESTRICTIONS + [lambda p: p["block_size_x"] * p["items_per_thread"] >= 1024],
        cache=str(root / "examples/data/vector_add_h100.json"), simulation_mode=True, quiet=True)
    by_string, _ = ktune.tune_kernel(
        "vector_add", str(root / "templates/vector_add/vector_add.cu"), N, vector_add_args(), PARAMS,
        restrictions=RESTRICTIONS + ["block_size_x * items_per_thread >= 1024"],
        cache=str(root / "examples/data/vector_add_h100.json"), simulation_mode=True, quiet=True, db=db + "2")
    assert by_function and key(by_function) == key(by_string)
    assert all(r["block_size_x"] * r["items_per_thread"] >= 1024 for r in by_function)


def _restricted(root, restriction, **kw):
    return ktune.tune_kernel(
        "vector_add", str(root / "templates/vector_add/vector_add.cu"), N, vector_add_args(), PARAMS,
        restrictions=RESTRICTIONS + [restriction], cache=str(root / "examples/data/vector_add_h100.json"),
        simulation_mode=True, quiet=True, **kw)


@pytest.mark.parametrize("strategy", ["random_sample", "portfolio"])
def test_function_restriction_limits_any_strategy(root, db, strategy):
    """Another strategy than brute_force searches among the configurations a
    function allows (`ktune tune --within`): it measures only those, with the
    results the equivalent string restriction gives."""
    def times(results):
        return {tuple(r[k] for k in PARAMS): r["time"] for r in results}

    function = lambda p: p["block_size_x"] * p["items_per_thread"] >= 1024  # noqa: E731
    string = "block_size_x * items_per_thread >= 1024"
    # No budget: the whole allowed space, as the string restriction gives it.
    by_function, env = _restricted(root, function, strategy=strategy)
    by_string, _ = _restricted(root, string, strategy=strategy, db=db + "2")
    assert by_function and times(by_function) == times(by_string)
    assert env["ktune"]["within"]["configurations"] == len(by_function)
    # A budget: spent on allowed configurations only, each with the string run's result.
    some, env = _restricted(root, function, strategy=strategy, strategy_options={"max_fevals": 10}, seed=3,
                            db=db + "3")
    assert env["ktune"]["evaluations"] == 10 and len(some) == 10
    assert all(r["block_size_x"] * r["items_per_thread"] >= 1024 for r in some)
    everything = times(by_string)
    assert all(everything[key] == time for key, time in times(some).items())
