#!/usr/bin/env python3
"""Tune a ktune YAML spec with Kernel Tuner, for a side-by-side on the same GPU.

The subset of the spec vocabulary that maps one to one onto tune_kernel:
kernel.name / source / compiler_options; constants (Python expressions, used
in the sizes, values and grid); tune_params (lists or Python list
expressions); restrictions (Python expressions, Kernel Tuner's own form);
block_size_names; the grid either as `grid` expressions (blocks per axis:
problem_size becomes a function of the configuration with grid_div []) or as
problem_size with grid_div_x/y/z; arguments: pointers with `size` and fill
random (numpy.random.randn, as Kernel Tuner's examples), zeros or constant,
and integer or float scalars with `value`. The kernel's folder is added with
-I so relative includes resolve. No verification (Kernel Tuner's default,
while ktune verifies against the spec's reference): the comparison favours
Kernel Tuner. Anything else in the spec stops the runner with its name.

    kt_spec_side_by_side.py SPEC.yaml --out DIR [--set NAME=VALUE ...]
        [--strategy brute_force] [--max-fevals N] [--time-limit S] [--optimum MS]
        [--seed 1] [--iterations 7]

Prints one JSON line: evaluated, wall time of tune_kernel and per
configuration, compile and benchmark totals, the best time and configuration,
and with --optimum the seconds from tune_kernel's start to 90% and 95% of it.
"""
import argparse
import json
import os
import random
import re
import sys
import time

import numpy as np
import yaml

from kt_reached import reached_times

HANDLED = {"kernel", "constants", "problem_size", "grid", "grid_div_x", "grid_div_y", "grid_div_z",
           "block_size_names", "shared_memory", "tune_params", "restrictions", "arguments", "verify",
           "metrics", "objective", "higher_is_better", "strategy"}
NUMPY = {"float*": np.float32, "double*": np.float64, "int*": np.int32, "int32*": np.int32,
         "half*": np.float16, "uint8*": np.uint8}
SCALAR = {"int": np.int32, "int32": np.int32, "int64": np.int64, "float": np.float32, "double": np.float64}


def evaluate(expr, scope):
    return eval(str(expr), {"__builtins__": {"range": range, "int": int, "min": min, "max": max}}, dict(scope))


def convert(spec_path, overrides):
    spec = yaml.safe_load(open(spec_path))
    unknown = sorted(set(spec) - HANDLED)
    if unknown:
        sys.exit(f"kt_spec_side_by_side: keys this runner does not map: {', '.join(unknown)}")
    if spec.get("shared_memory", 0) not in (0, "0"):
        sys.exit("kt_spec_side_by_side: dynamic shared memory is not mapped")
    constants = {}
    for name, expr in (spec.get("constants") or {}).items():
        constants[name] = overrides[name] if name in overrides else evaluate(expr, constants)
    tune_params = {}
    for name, values in spec["tune_params"].items():
        tune_params[name] = list(evaluate(values, constants)) if isinstance(values, str) else list(values)
    kernel = spec["kernel"]
    source = os.path.join(os.path.dirname(os.path.abspath(spec_path)), kernel["source"])
    options = list(kernel.get("compiler_options") or [])
    options += [f"-I{os.path.dirname(source)}"]
    names = list(spec.get("block_size_names") or ["block_size_x", "block_size_y", "block_size_z"])
    if "grid" in spec:
        grid = [str(g) for g in spec["grid"]]
        problem_size = lambda p: tuple(int(evaluate(g, {**constants, **p})) for g in grid)
        grid_div = ([], [], [])
    else:
        ps = spec["problem_size"]
        ps = ps if isinstance(ps, list) else [ps]
        problem_size = tuple(int(evaluate(e, constants)) for e in ps)
        grid_div = tuple(spec.get(f"grid_div_{a}") for a in "xyz")
    args = []
    for a in spec["arguments"]:
        t = a["type"]
        if t in NUMPY:
            n = int(evaluate(a["size"], constants))
            fill = a.get("fill", "random")
            if fill == "random":
                args.append(np.random.randn(n).astype(NUMPY[t]))
            elif fill == "zeros":
                args.append(np.zeros(n, dtype=NUMPY[t]))
            elif fill == "constant":
                args.append(np.full(n, float(a["value"]), dtype=NUMPY[t]))
            else:
                sys.exit(f"kt_spec_side_by_side: fill '{fill}' of '{a['name']}' is not mapped")
        elif t in SCALAR:
            args.append(SCALAR[t](evaluate(a["value"], constants)))
        else:
            sys.exit(f"kt_spec_side_by_side: argument type '{t}' of '{a['name']}' is not mapped")
    # Kernel Tuner's restrictions see only the parameters: the constants they
    # name (M % block_m == 0) go in as their values.
    def bind(r):
        for name, value in constants.items():
            if name not in tune_params and isinstance(value, (int, float)):
                r = re.sub(rf"\b{re.escape(name)}\b", repr(value), r)
        return r

    restrictions = [bind(str(r)) for r in spec.get("restrictions") or []]
    return dict(kernel_name=kernel["name"], kernel_source=source, problem_size=problem_size, grid_div=grid_div,
                arguments=args, tune_params=tune_params, restrictions=restrictions, compiler_options=options,
                block_size_names=names)


def restriction_function(restrictions):
    """The restrictions as one Python function of the configuration (a dict),
    which Kernel Tuner takes as it is: its parser of restriction strings (1.5,
    python-constraint2) finds no valid configuration at all for
    `block_size_x == (block_m // thread_m) * (block_n // thread_n)` (sgemm's)."""
    if not restrictions:
        return None
    code = [compile(r, "<restriction>", "eval") for r in restrictions]
    scope = {"__builtins__": {"min": min, "max": max, "int": int}}

    # A def, not a lambda: Kernel Tuner rewrites a lambda's source into a string.
    def allowed(p):
        return all(eval(c, scope, dict(p)) for c in code)

    return allowed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec")
    ap.add_argument("--out", default="kt_out")
    ap.add_argument("--set", action="append", default=[], help="NAME=VALUE: override a constant")
    ap.add_argument("--strategy", default="brute_force")
    ap.add_argument("--max-fevals", type=int, default=None)
    ap.add_argument("--time-limit", type=float, default=None, help="seconds: Kernel Tuner's strategy option time_limit")
    ap.add_argument("--optimum", type=float, default=None, help="ms: the best known time, for to_90_s and to_95_s")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=7)
    a = ap.parse_args()
    overrides = {k: int(v) for k, v in (s.split("=", 1) for s in a.set)}
    random.seed(a.seed)
    np.random.seed(a.seed)
    t_convert = time.perf_counter()
    c = convert(a.spec, overrides)
    fill_s = time.perf_counter() - t_convert
    import kernel_tuner
    os.makedirs(a.out, exist_ok=True)
    cache = os.path.join(os.path.abspath(a.out), "kt_cache.json")
    if os.path.exists(cache):
        os.remove(cache)
    options = {"max_fevals": a.max_fevals} if a.max_fevals else {}
    if a.time_limit:
        options["time_limit"] = a.time_limit
    t0_epoch = time.time()
    t0 = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        c["kernel_name"], c["kernel_source"], c["problem_size"], c["arguments"], c["tune_params"],
        grid_div_x=c["grid_div"][0], grid_div_y=c["grid_div"][1], grid_div_z=c["grid_div"][2],
        restrictions=restriction_function(c["restrictions"]), block_size_names=c["block_size_names"], lang="cupy",
        compiler_options=c["compiler_options"], iterations=a.iterations, strategy=a.strategy,
        strategy_options=options, cache=cache, quiet=True)
    wall = time.perf_counter() - t0
    ok = [r for r in results if isinstance(r.get("time"), (int, float))]
    best = min(ok, key=lambda r: r["time"]) if ok else None
    total = lambda k: round(sum(float(r.get(k, 0) or 0) for r in results) / 1000, 3)
    reached = reached_times(ok, a.optimum, t0_epoch) if a.optimum else {}
    print(json.dumps({
        "tool": "kernel_tuner", "kernel_tuner_version": kernel_tuner.__version__, "device": env.get("device_name"),
        "strategy": a.strategy, "evaluated": len(results), "ok": len(ok), "inputs_s": round(fill_s, 3),
        "wall_s": round(wall, 3), "wall_s_per_config": round(wall / len(results), 4) if results else None,
        "compile_s": total("compile_time"), "benchmark_s": total("benchmark_time"),
        "best_time_ms": best["time"] if best else None,
        "best_config": {k: best[k] for k in c["tune_params"]} if best else None,
        "to_90_s": reached.get(0.9), "to_95_s": reached.get(0.95)}))


if __name__ == "__main__":
    sys.exit(main())
