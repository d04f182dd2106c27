#!/usr/bin/env python3
"""Tune a T1 file (the BAT suite's format) with Kernel Tuner, for a side-by-side
with ktune on the same GPU.

Kernel Tuner's own tune_kernel_T1 needs KernelSpecification.ProblemSize and
Device, which BAT's files do not have: they give the grid as GlobalSize in
blocks ("GlobalSizeType": "CUDA"). This runner converts such a file for
kernel_tuner.tune_kernel:

- tune_params from ConfigurationSpace.TuningParameters (Values: a Python list
  expression), restrictions from Conditions[].Expression;
- the grid: a GlobalSize axis "N // P" (blocks) becomes problem_size N with
  grid_div [P] (grid = ceil(N / P), so every value of P must divide N); a
  constant C becomes problem_size C with grid_div [] (C blocks). A file with
  ProblemSize uses ProblemSize and GridDivX/Y/Z as tune_kernel_T1 does;
- the block from LocalSize (parameter names become block_size_names);
- the arguments: Scalar int32/float (FillValue), Vector float of Size with
  FillType Random (numpy.random.randn, as tune_kernel_T1) or Constant;
- CompilerOptions as given; lang cupy; objective time (mean of `iterations`
  runs, Kernel Tuner's "time"). SharedMemory is not passed (neither
  tune_kernel_T1 nor BAT's Kernel Tuner runner does; ktune passes it as
  dynamic shared memory).

    bench/gpu/kt_t1_side_by_side.py T1.json --out DIR [--strategy random_sample]
        [--max-fevals 60] [--time-limit S] [--seed 1] [--iterations 10] [--flops 2*4096**3] [--optimum MS]
        [--dry-run] [--simulate KT_CACHE.json]

Prints one JSON line (also written to DIR/kt_<strategy>.json). --dry-run
prints the conversion only (no cupy, no GPU; Kernel Tuner is used only if it
is importable, to count its search space). --simulate replays a Kernel Tuner
cache file instead of running on the GPU (to test this runner without one).
"""
import argparse
import ast
import collections
import contextlib
import inspect
import io
import itertools
import json
import math
import os
import random
import re
import sys
import time

from kt_reached import reached_times

try:
    import numpy as np
except ImportError:  # --dry-run works without numpy
    np = None

AXES = ("X", "Y", "Z")
DEFAULT_BLOCK_NAMES = ("block_size_x", "block_size_y", "block_size_z")


class ConversionError(Exception):
    pass


def py_eval(text, names=None):
    """Evaluate a T1 expression (a Values list, a Size) as Python, with only a
    few builtins."""
    env = {"__builtins__": {}, "range": range, "list": list, "len": len, "int": int, "float": float,
           "min": min, "max": max, "abs": abs, "round": round}
    env.update(names or {})
    return eval(text, env)  # noqa: S307 - T1 files are Python expressions by definition


def read_tune_params(space):
    tune_params = collections.OrderedDict()
    for p in space["TuningParameters"]:
        vals = p["Values"]
        if isinstance(vals, str):
            vals = py_eval(vals)
        if not isinstance(vals, (list, tuple)) or not vals:
            raise ConversionError(f"parameter {p['Name']}: Values {p['Values']!r} is not a non-empty list")
        t = p.get("Type", "int")
        if t == "int":
            vals = [int(v) for v in vals]
        elif t == "float":
            vals = [float(v) for v in vals]
        elif t != "string":
            raise ConversionError(f"parameter {p['Name']}: Type {t!r} is not supported")
        tune_params[p["Name"]] = list(vals)
    return tune_params


def read_restrictions(space):
    out = []
    for c in space.get("Conditions", []):
        if not isinstance(c.get("Expression"), str):
            raise ConversionError(f"condition {c!r}: Expression must be a string")
        out.append(c["Expression"])
    return out


def valid_configs(tune_params, restrictions):
    """The valid configurations by plain Python (the dry run's count, and the
    divisibility check of the grid)."""
    names = list(tune_params)
    codes = [compile(r, "<restriction>", "eval") for r in restrictions]
    for values in itertools.product(*tune_params.values()):
        env = dict(zip(names, values))
        if all(py_eval(c, env) for c in codes):
            yield env


def read_block(kspec, tune_params):
    """block_size_names from LocalSize; a constant axis > 1 becomes a one-value
    parameter under Kernel Tuner's default name."""
    local = kspec.get("LocalSize", {})
    names, extra = [], collections.OrderedDict()
    for i, axis in enumerate(AXES):
        v = local.get(axis, 1)
        text = str(v).strip()
        if text in tune_params:
            names.append(text)
        elif re.fullmatch(r"\d+", text):
            names.append(DEFAULT_BLOCK_NAMES[i])
            if int(text) != 1:
                extra[DEFAULT_BLOCK_NAMES[i]] = [int(text)]
        else:
            raise ConversionError(
                f"LocalSize.{axis} = {v!r}: only a parameter name or an integer can be a Kernel Tuner block dimension")
    # Kernel Tuner wants no trailing default names it would add itself.
    while names and names[-1] in DEFAULT_BLOCK_NAMES and names[-1] not in extra:
        names.pop()
    return names, extra


def _divisor_names(node, text):
    """Names in a divisor: P, or P * Q * ..."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _divisor_names(node.left, text) + _divisor_names(node.right, text)
    raise ConversionError(f"GlobalSize {text!r}: a divisor must be a parameter or a product of parameters")


def parse_global_axis(value, tune_params, constants):
    """('N // P // Q' or 'N // (P * Q)' or a constant) -> (N, [P, Q])."""
    text = str(value).strip()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as e:
        raise ConversionError(f"GlobalSize {text!r}: not an expression ({e})")
    divs = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        divs = _divisor_names(node.right, text) + divs
        node = node.left
    try:
        n = py_eval(compile(ast.Expression(node), "<GlobalSize>", "eval"), constants)
    except Exception:
        n = None
    if not isinstance(n, int) or isinstance(n, bool):
        raise ConversionError(
            f"GlobalSize {text!r}: expected a constant number of blocks or 'N // P' with N a constant "
            "and P a tuning parameter (or a product of them); Kernel Tuner needs problem_size + grid_div")
    for d in divs:
        if d not in tune_params:
            raise ConversionError(f"GlobalSize {text!r}: {d!r} is not a tuning parameter")
    return n, divs


def read_grid(kspec, tune_params, restrictions, constants, check_divisible=True):
    """problem_size and grid_div_x/y/z for Kernel Tuner."""
    if kspec.get("ProblemSize") is not None:  # Kernel Tuner's own T1 form
        ps = kspec["ProblemSize"]
        ps = tuple(ps) if isinstance(ps, list) else ps
        divs = [kspec.get(k) or None for k in ("GridDivX", "GridDivY", "GridDivZ")]
        return {"problem_size": ps, "grid_div": divs, "source": "ProblemSize + GridDiv*"}
    gsize = kspec.get("GlobalSize")
    if not gsize:
        raise ConversionError("KernelSpecification has neither ProblemSize nor GlobalSize")
    gtype = str(kspec.get("GlobalSizeType", "CUDA")).lower()
    axes = [a for a in AXES if a in gsize]
    problem, divs = [], []
    for a in axes:
        n, d = parse_global_axis(gsize[a], tune_params, constants)
        if gtype == "opencl":
            if d:
                raise ConversionError(f"GlobalSize.{a} {gsize[a]!r}: OpenCL global sizes (threads) must be constants")
            problem.append(n)
            divs.append(None)  # Kernel Tuner divides by the block dimension
        elif gtype == "cuda":
            problem.append(n)
            divs.append(d)
        else:
            raise ConversionError(f"GlobalSizeType {kspec['GlobalSizeType']!r} is not CUDA or OpenCL")
    if gtype == "cuda" and check_divisible:
        # Kernel Tuner rounds up (ceil(N / P)); BAT and ktune evaluate N // P.
        # They agree only where P divides N in every valid configuration.
        if any(divs):
            for cfg in valid_configs(tune_params, restrictions):
                for a, n, d in zip(axes, problem, divs):
                    q = math.prod(cfg[x] for x in d)
                    if n % q:
                        raise ConversionError(
                            f"GlobalSize.{a}: {n} is not a multiple of {'*'.join(d)} = {q} in {cfg}; "
                            "Kernel Tuner's grid_div rounds up where the T1 file rounds down")
    while len(divs) < 3:
        divs.append(None)
    return {"problem_size": tuple(problem), "grid_div": divs, "source": f"GlobalSize ({gtype.upper()})"}


def read_arguments(kspec, tune_params, dry_run):
    """The kernel's arguments, their shapes, and the constant-memory symbols
    (cmem_args): a Vector with MemType Constant is both an argument and the
    __constant__ symbol of its Name, as Kernel Tuner's convolution example
    passes its filter."""
    args, shapes, cmem = [], [], {}
    for i, a in enumerate(kspec.get("Arguments", [])):
        name = a.get("Name", f"arg{i}")
        mem, typ = a.get("MemoryType"), a.get("Type")
        if mem == "Symbol" or (a.get("MemType") == "Constant" and mem != "Vector"):
            raise ConversionError(f"argument {name}: only Vector arguments may be in constant memory here")
        if mem == "Scalar":
            if typ not in ("int32", "float"):
                raise ConversionError(f"argument {name}: scalar type {typ!r} is not supported (int32, float)")
            dtype = "int32" if typ == "int32" else "float32"
            value = int(a["FillValue"]) if typ == "int32" else float(a["FillValue"])
            args.append(np.dtype(dtype).type(value) if np is not None else value)
            shapes.append({"name": name, "kind": "scalar", "dtype": dtype, "value": value})
        elif mem == "Vector":
            if typ != "float":
                raise ConversionError(f"argument {name}: vector type {typ!r} is not supported (float)")
            size = a["Size"]
            if isinstance(size, str):
                # A size may name a parameter: its list of values (max(filter_width)).
                size = py_eval(size, {"ProblemSize": kspec.get("ProblemSize"), **tune_params})
            if not isinstance(size, int):
                raise ConversionError(f"argument {name}: Size {a['Size']!r} is not an integer")
            fill = a.get("FillType")
            if fill not in ("Random", "Constant"):
                raise ConversionError(f"argument {name}: FillType {fill!r} is not supported (Random, Constant)")
            if dry_run:
                v = None
            elif fill == "Random":
                v = np.random.randn(size).astype(np.float32)
            else:
                v = np.full(size, a.get("FillValue", 0), dtype=np.float32)
            args.append(v)
            if a.get("MemType") == "Constant":
                cmem[name] = v
            shapes.append({"name": name, "kind": "vector", "dtype": "float32", "shape": [size], "fill": fill,
                           "fill_value": a.get("FillValue"), "MiB": round(size * 4 / 2**20, 1),
                           "constant": a.get("MemType") == "Constant"})
        else:
            raise ConversionError(f"argument {name}: MemoryType {mem!r} is not supported (Scalar, Vector)")
    return args, shapes, cmem


def convert(t1_path, dry_run=False):
    with open(t1_path) as f:
        t1 = json.load(f)
    kspec = t1["KernelSpecification"]
    if kspec.get("Language", "CUDA") != "CUDA":
        raise ConversionError(f"Language {kspec['Language']!r}: only CUDA")
    space = t1["ConfigurationSpace"]
    constants = dict(t1.get("BenchmarkConfig") or {})
    tune_params = read_tune_params(space)
    restrictions = read_restrictions(space)
    block_names, extra = read_block(kspec, tune_params)
    tune_params.update(extra)
    grid = read_grid(kspec, tune_params, restrictions, constants)
    args, shapes, cmem = read_arguments(kspec, tune_params, dry_run)
    source = os.path.join(os.path.dirname(os.path.abspath(t1_path)), kspec["KernelFile"])
    if not os.path.isfile(source):
        raise ConversionError(f"KernelFile {kspec['KernelFile']!r} not found at {source}")
    return {
        "kernel_name": kspec["KernelName"],
        "kernel_source": source,
        "tune_params": tune_params,
        "restrictions": restrictions,
        "block_size_names": block_names,
        "grid": grid,
        "arguments": args,
        "argument_shapes": shapes,
        "cmem_args": cmem,
        "compiler_options": list(kspec.get("CompilerOptions") or []),
        "ignored": {k: kspec[k] for k in ("SharedMemory",) if kspec.get(k)},
    }


def kt_version():
    try:
        from importlib.metadata import version
        return version("kernel_tuner")
    except Exception:
        return None


def dry_run(conv, args):
    tp = conv["tune_params"]
    cart = math.prod(len(v) for v in tp.values())
    valid = sum(1 for _ in valid_configs(tp, conv["restrictions"]))
    out = {
        "dry_run": True,
        "kernel": conv["kernel_name"],
        "kernel_source": conv["kernel_source"],
        "tune_params": {k: len(v) for k, v in tp.items()},
        "cartesian_size": cart,
        "restrictions": len(conv["restrictions"]),
        "valid_configurations_python": valid,
        "problem_size": list(conv["grid"]["problem_size"]) if isinstance(conv["grid"]["problem_size"], tuple)
        else conv["grid"]["problem_size"],
        "grid_div_x": conv["grid"]["grid_div"][0],
        "grid_div_y": conv["grid"]["grid_div"][1],
        "grid_div_z": conv["grid"]["grid_div"][2],
        "grid_from": conv["grid"]["source"],
        "block_size_names": conv["block_size_names"],
        "arguments": conv["argument_shapes"],
        "compiler_options": conv["compiler_options"],
        "not_passed": conv["ignored"],
        "strategy": args.strategy,
        "max_fevals": args.max_fevals,
        "iterations": args.iterations,
        "kernel_tuner_version": kt_version(),
    }
    # Kernel Tuner's own count of the space (needs kernel_tuner, no GPU).
    try:
        from kernel_tuner.searchspace import Searchspace
        ss = Searchspace(tp, list(conv["restrictions"]), 1024)
        out["valid_configurations_kernel_tuner"] = ss.size
    except Exception as e:  # kernel_tuner not installed here
        out["valid_configurations_kernel_tuner"] = f"unavailable ({type(e).__name__}: {e})"
    # The grid of one example configuration, as Kernel Tuner computes it.
    try:
        from kernel_tuner import util as ktu
        cfg = next(valid_configs(tp, conv["restrictions"]))
        names = list(conv["block_size_names"])
        ktu.append_default_block_size_names(names)
        ps = ktu.get_problem_size(conv["grid"]["problem_size"], cfg)
        out["example_config"] = cfg
        out["example_grid"] = list(ktu.get_grid_dimensions(ps, cfg, conv["grid"]["grid_div"], names))
        out["example_block"] = [cfg.get(n, 1) for n in names]
    except Exception as e:
        out["example_grid"] = f"unavailable ({type(e).__name__}: {e})"
    return out


class Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, s):
        for st in self.streams:
            st.write(s)
        return len(s)

    def flush(self):
        for st in self.streams:
            st.flush()


def error_kind(r):
    e = r.get("__error__")
    if e is None:
        return None
    return str(e) or type(e).__name__  # InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig


def run(conv, args):
    import kernel_tuner

    os.makedirs(args.out, exist_ok=True)
    tag = f"kt_{args.strategy}"
    log_path = os.path.join(args.out, f"{tag}.log")
    if args.simulate:
        cache = os.path.abspath(args.simulate)
    else:
        cache = os.path.join(os.path.abspath(args.out), f"{tag}_cache.json")
        if os.path.exists(cache):
            os.remove(cache)  # a fresh run: Kernel Tuner would resume from it
    # brute_force takes no max_fevals: 0 leaves it out.
    strategy_options = {"max_fevals": args.max_fevals} if args.max_fevals > 0 else {}
    if args.time_limit:
        strategy_options["time_limit"] = args.time_limit
    kw = dict(
        grid_div_x=conv["grid"]["grid_div"][0],
        grid_div_y=conv["grid"]["grid_div"][1],
        grid_div_z=conv["grid"]["grid_div"][2],
        restrictions=list(conv["restrictions"]),
        lang="cupy",
        device=args.device,
        compiler_options=conv["compiler_options"],
        iterations=args.iterations,
        block_size_names=list(conv["block_size_names"]),
        strategy=args.strategy,
        strategy_options=strategy_options,
        cache=cache,
        objective="time",
        objective_higher_is_better=False,
        verbose=True,  # prints the reason of a skipped configuration (into the log)
        quiet=False,
    )
    if conv["cmem_args"]:
        kw["cmem_args"] = conv["cmem_args"]
    if args.simulate:
        kw["simulation_mode"] = True
    sig = inspect.signature(kernel_tuner.tune_kernel).parameters
    if "seed" in sig:
        kw["seed"] = args.seed  # Kernel Tuner >= 1.5 (used by some strategies only)
    # random_sample draws from numpy.random's global state (Searchspace.get_random_sample),
    # other strategies also from `random`: seed both.
    random.seed(args.seed)
    np.random.seed(args.seed)

    results, env, aborted = [], {}, None
    t0 = time.perf_counter()
    t0_epoch = time.time()
    # Kernel Tuner's per-configuration lines go to the log and to stderr; stdout
    # keeps only the final JSON line.
    with open(log_path, "w") as log, contextlib.redirect_stdout(Tee(log, sys.stderr)):
        try:
            results, env = kernel_tuner.tune_kernel(
                conv["kernel_name"], conv["kernel_source"], conv["grid"]["problem_size"], conv["arguments"],
                conv["tune_params"], **kw)
        except (Exception, KeyboardInterrupt) as e:  # a failure Kernel Tuner does not classify stops it; so does SIGINT
            aborted = f"{type(e).__name__}: {str(e)[:500]}"
            print(f"ABORTED: {aborted}")
    wall = time.perf_counter() - t0

    if aborted and not results and not args.simulate and os.path.exists(cache):
        # What was evaluated before the abort is in the cache (an unfinished file).
        try:
            from kernel_tuner.util import read_cache
            results = list(read_cache(cache, open_cache=False).get("cache", {}).values())
        except Exception as e:
            print(f"kt_t1_side_by_side: cannot read {cache}: {e}", file=sys.stderr)

    counts = collections.Counter(error_kind(r) or "ok" for r in results)
    ok = [r for r in results if error_kind(r) is None and isinstance(r.get("time"), (int, float))]
    best = min(ok, key=lambda r: r["time"]) if ok else None

    reasons = {}
    skip_re = re.compile(r"(skipping config .*|compile_kernel failed.*|Error while .*|ABORTED: .*)")
    with open(log_path) as log:
        for line in log:
            m = skip_re.search(line)
            if m:
                text = m.group(1).strip()
                key = re.sub(r"skipping config \S+ ", "skipping config ", text)
                reasons.setdefault(key, 0)
                reasons[key] += 1

    def total(key):
        return round(sum(float(r.get(key, 0) or 0) for r in results) / 1000, 3)

    # Seconds from the start of tune_kernel to the first result within
    # `goal` of --optimum.
    reached = reached_times(ok, args.optimum, t0_epoch) if args.optimum else {}

    keys = list(conv["tune_params"])
    out = {
        "tool": "kernel_tuner",
        "kernel_tuner_version": kt_version(),
        "device": env.get("device_name"),
        "strategy": args.strategy,
        "max_fevals": args.max_fevals,
        "seed": args.seed,
        "iterations": args.iterations,
        "simulated": bool(args.simulate),
        "evaluated": len(results),
        "status_counts": dict(counts),
        "failed": sum(n for k, n in counts.items() if k != "ok"),
        "failure_reasons": reasons,
        "aborted": aborted,
        "wall_s": round(wall, 3),
        "wall_s_per_config": round(wall / len(results), 4) if results else None,
        "compile_s": total("compile_time"),
        "benchmark_s": total("benchmark_time"),
        "verification_s": total("verification_time"),
        "best_time_ms": best["time"] if best else None,
        "best_tflops": args.flops / (best["time"] * 1e-3) / 1e12 if best else None,
        "best_config": {k: best[k] for k in keys} if best else None,
        "to_90_s": reached.get(0.9),
        "to_95_s": reached.get(0.95),
        "flops": args.flops,
        "cache": cache,
        "log": log_path,
    }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("t1", help="T1 JSON file (its KernelFile is read relative to it)")
    ap.add_argument("--out", default="kt_out", help="output folder (cache, log, result JSON)")
    ap.add_argument("--strategy", default="random_sample")
    ap.add_argument("--optimum", type=float, default=None,
                    help="ms: the best time known (e.g. an exhaustive run's), for the seconds to 90%% and 95%% of it")
    ap.add_argument("--max-fevals", type=int, default=60)
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds: Kernel Tuner's strategy option time_limit (e.g. brute_force for a while)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data-seed", type=int, default=7, help="numpy seed for the Random arguments")
    ap.add_argument("--iterations", type=int, default=10, help="runs per configuration (BAT's runner: 10)")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--flops", type=lambda s: float(py_eval(s)), default=float(2 * 4096**3),
                    help="floating-point operations of one kernel run (expression; default 2*4096**3)")
    ap.add_argument("--dry-run", action="store_true", help="print the conversion only (no GPU, no cupy)")
    ap.add_argument("--simulate", metavar="KT_CACHE", help="replay a Kernel Tuner cache instead of the GPU")
    args = ap.parse_args()

    if np is None and not args.dry_run:
        print("kt_t1_side_by_side: numpy is needed (only --dry-run works without it)", file=sys.stderr)
        return 2
    if np is not None:
        np.random.seed(args.data_seed)
    try:
        conv = convert(args.t1, dry_run=args.dry_run)
    except ConversionError as e:
        print(f"kt_t1_side_by_side: {args.t1}: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        d = dry_run(conv, args)
        print("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in d.items()) + "\n}")
        return 0
    out = run(conv, args)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"kt_{args.strategy}.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out))
    return 0 if out["best_time_ms"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
