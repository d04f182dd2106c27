#!/usr/bin/env python3
"""Kernel Tuner's strategies replayed on an exhaustive recording (its simulation
mode), summarised as `ktune strategies compare` summarises ktune's, and the two
tables side by side.

Kernel Tuner is not a dependency of ktune: install it into a virtual
environment of its own, e.g.

    python3 -m venv /tmp/ktenv && /tmp/ktenv/bin/pip install kernel_tuner==1.5.0

    /tmp/ktenv/bin/python bench/replay/kt_replay.py T1.json CACHE.json[.gz] \
        [--strategies hybrid_vndx,pso,...] [--runs 10] [--max-fevals 200] \
        [--ktune-json COMPARE.json] [--json OUT.json]
    /tmp/ktenv/bin/python bench/replay/kt_replay.py --manifest M [--root DIR] --out-dir DIR \
        [--ktune-json COMPARE.json] [--ktune build/ktune] ...

T1.json gives the restrictions and the kernel file (a T1 input file, as the
benchmark hub ships with its caches); CACHE is Kernel Tuner's cache of every
configuration (gzipped or not), replayed with `simulation_mode=True`. Each
strategy runs `--runs` times (seeds 1..runs: `random.seed`, `numpy.random.seed`
and tune_kernel's `seed`) with `strategy_options={'max_fevals': N}`.

Kernel Tuner's budget is not exact: some strategies visit more distinct
configurations than max_fevals (its genetic algorithm, on the A100
convolution, a median of over a thousand for 200). Here a run's best after k
evaluations is the best of the first k configurations it visited (results in
order, failures included), so a strategy that overruns is judged at k, not at
the end; `evals` reports how many it visited (median over runs).

--ktune-json takes the output of `ktune strategies compare ... --json` on the
same recording and prints the side-by-side table: per budget, exact random
search (ktune's), ktune's default, ktune's best strategy, Kernel Tuner's best.

--manifest replays every space of a `ktune strategies compare` manifest (a
ktune YAML spec's restrictions come from `ktune space --json`), keeps each
space's summary in --out-dir (a rerun resumes), and, with --ktune-json (the
manifest run of `strategies compare --json`, ktune's default named first in
--strategies), prints per space and budget exact random search, ktune's
default and Kernel Tuner's best, and over all spaces how often the default
is ahead of, level with or behind Kernel Tuner's best.
"""
import argparse
import contextlib
import gzip
import io
import json
import os
import random
import statistics
import sys
import tempfile
import time

DEFAULT_STRATEGIES = [
    "random_sample", "genetic_algorithm", "pso", "firefly_algorithm", "simulated_annealing", "diff_evo",
    "greedy_ils", "greedy_mls", "dual_annealing", "basinhopping", "bayes_opt", "hybrid_vndx",
    "adaptive_tabu_greywolf",
]
BUDGETS = (20, 50, 100, 200)


def load_cache(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        text = f.read()
    # Kernel Tuner leaves an unfinished cache without its closing braces.
    try:
        return json.loads(text), text
    except json.JSONDecodeError:
        text = text.rstrip().rstrip(",") + "}}"
        return json.loads(text), text


def median_low(xs):
    s = sorted(xs)
    return s[(len(s) - 1) // 2] if s else None


def read_spec(path, ktune):
    """The kernel (name, file, LocalSize, GridDiv*) and restrictions of a T1
    file, or of a ktune YAML spec through `ktune space --json` (its kernel
    file is not needed in simulation mode; restrictions None: see below)."""
    if path.endswith((".yaml", ".yml")):
        import subprocess
        out = subprocess.run([ktune, "space", path, "--json"], check=True, capture_output=True, text=True).stdout
        space = json.loads(out)
        # Its restrictions and device limits are ktune's expressions: the
        # configurations recorded stand for them (the recording is exhaustive).
        return {"KernelName": space["kernel"], "KernelFile": os.path.abspath(path)}, None
    with open(path) as f:
        t1 = json.load(f)
    ks = dict(t1["KernelSpecification"])
    ks["KernelFile"] = os.path.join(os.path.dirname(os.path.abspath(path)), ks["KernelFile"])
    return ks, [c["Expression"] for c in t1["ConfigurationSpace"].get("Conditions", [])]


def replay_space(t1_path, cache_path, args):
    import numpy as np
    import kernel_tuner

    ks, restrictions = read_spec(t1_path, args.ktune)
    data, text = load_cache(cache_path)
    tune_params = data["tune_params"]
    keys = data["tune_params_keys"]
    if restrictions is None:
        recorded = set(data["cache"])
        def restrictions(params):  # a def: Kernel Tuner rewrites lambdas from their source
            return ",".join(str(params[k]) for k in keys) in recorded
    ok_times = [r["time"] for r in data["cache"].values()
                if isinstance(r.get("time"), (int, float)) and r["time"] < 1e20]
    optimum = min(ok_times)
    tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    tmp.write(text)
    tmp.close()
    source = ks["KernelFile"]
    if not os.path.exists(source):  # simulation mode reads the cache, never the kernel
        source = "// a replay of a cache needs no kernel source\n"
    # Older caches write a one-dimensional problem size as a number.
    ps = data["problem_size"]
    problem_size = tuple(ps) if isinstance(ps, list) else (ps,)
    local = ks.get("LocalSize", {})
    block_names = [local[a] for a in ("X", "Y", "Z") if a in local and local[a] in tune_params]
    grid_div = [ks.get(k) for k in ("GridDivX", "GridDivY", "GridDivZ")]

    summary = {"cache": cache_path, "optimum": optimum, "configurations": len(data["cache"]),
               "runs": args.runs, "max_fevals": args.max_fevals, "strategies": {}}
    for name in [s for s in args.strategies.split(",") if s]:
        fracs = {b: [] for b in BUDGETS if b <= args.max_fevals}
        visited, walls = [], []
        for seed in range(1, args.runs + 1):
            random.seed(seed)
            np.random.seed(seed)
            t0 = time.perf_counter()
            try:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    results, _ = kernel_tuner.tune_kernel(
                        ks["KernelName"], source, problem_size, [], tune_params,
                        restrictions=restrictions, block_size_names=block_names or None,
                        grid_div_x=grid_div[0], grid_div_y=grid_div[1], grid_div_z=grid_div[2],
                        strategy=name, strategy_options={"max_fevals": args.max_fevals},
                        cache=tmp.name, simulation_mode=True, seed=seed, quiet=True)
            except Exception as e:  # a strategy Kernel Tuner cannot run here
                print(f"kt_replay: {name} seed {seed}: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
                break
            walls.append(time.perf_counter() - t0)
            seen, best, curve = set(), float("inf"), []
            for r in results:
                key = ",".join(str(r[k]) for k in keys)
                if key in seen:
                    continue
                seen.add(key)
                t = r.get("time")
                if isinstance(t, (int, float)) and t < 1e20:
                    best = min(best, t)
                curve.append(best)
            visited.append(len(curve))
            for b in fracs:
                v = curve[min(b, len(curve)) - 1] if curve else float("inf")
                fracs[b].append(optimum / v if v < float("inf") else 0.0)
        if not visited:
            continue
        summary["strategies"][name] = {
            "fraction_at_budget": {str(b): statistics.median(v) for b, v in fracs.items()},
            "evals_median": median_low(visited), "seconds_per_run": statistics.mean(walls)}
        print(f"{name:24} " + " ".join(f"{b}:{statistics.median(v):.3f}" for b, v in fracs.items()) +
              f"  visited {median_low(visited)}  {statistics.mean(walls):.1f} s/run", file=sys.stderr)
    os.unlink(tmp.name)

    return summary


def read_manifest(path, root):
    """`LABEL SPEC DATA [DEVICE]` lines, paths quoted where they hold spaces,
    looked up under root, then beside the manifest (as ktune does)."""
    import shlex
    beside = os.path.dirname(os.path.abspath(path))
    def resolve(p):
        if os.path.isabs(p):
            return p
        if root and (os.path.exists(os.path.join(root, p)) or not os.path.exists(os.path.join(beside, p))):
            return os.path.join(root, p)
        return os.path.join(beside, p)
    out = []
    with open(path) as f:
        for line in f:
            words = shlex.split(line.split("#", 1)[0])
            if words:
                out.append((words[0], resolve(words[1]), resolve(words[2])))
    return out


def run_manifest(args):
    """Each space of the manifest replayed (LABEL.json in --out-dir), then,
    given ktune's `strategies compare --manifest ... --json`, per space and
    budget: exact random search, ktune's default (the first strategy named in
    it), Kernel Tuner's best strategy; and how often ktune's default is ahead
    of, level with (within 0.005) or behind Kernel Tuner's best."""
    import kernel_tuner  # noqa: F401 (fail early)
    os.makedirs(args.out_dir or ".", exist_ok=True)
    kt = {}
    for label, spec, cache in read_manifest(args.manifest, args.root):
        out = os.path.join(args.out_dir or ".", label + ".json")
        if not os.path.exists(out):
            t0 = time.perf_counter()
            summary = replay_space(spec, cache, args)
            with open(out, "w") as f:
                json.dump(summary, f, indent=1)
            print(f"kt_replay: {label} in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        with open(out) as f:
            kt[label] = json.load(f)["strategies"]
    if not args.ktune_json:
        return 0
    with open(args.ktune_json) as f:
        kj = json.load(f)
    default = kj["spaces"][0]["result"]["strategies"][0]["name"]
    budgets = [b for b in BUDGETS if b <= args.max_fevals]
    print(f"ktune's {default} against Kernel Tuner's best of {len(next(iter(kt.values())))} strategies per space "
          f"(median fraction of the optimum; ktune {kj.get('runs')} runs, Kernel Tuner {args.runs})")
    print("| space | budget | random search (exact) | ktune default | Kernel Tuner best (strategy) |")
    print("|---|---|---|---|---|")
    tally = {b: [0, 0, 0] for b in budgets}
    cols = {b: ([], [], []) for b in budgets}
    for sp in kj["spaces"]:
        label, res = sp["label"], sp["result"]
        if not kt.get(label):  # Kernel Tuner ran no strategy on it (stderr says why)
            continue
        ours = next(s for s in res["strategies"] if s["name"] == default)
        for b in budgets:
            rnd = res["random_exact"]["fraction_at_budget"][str(b)]["median"]
            d = ours["fraction_at_budget"][str(b)]["median"]
            theirs = {n: v["fraction_at_budget"][str(b)] for n, v in kt[label].items()}
            best = max(theirs, key=theirs.get)
            t = theirs[best]
            tally[b][0 if d > t + 0.005 else 1 if d >= t - 0.005 else 2] += 1
            for col, v in zip(cols[b], (rnd, d, t)):
                col.append(v)
            mark = "**" if d < t - 0.005 else ""
            print(f"| {label} | {b} | {rnd:.3f} | {mark}{d:.3f}{mark} | {t:.3f} ({best}) |")
    print(f"\nover {len(cols[budgets[0]][0])} spaces: median of the medians; ktune's default against Kernel Tuner's best")
    print("| budget | random search (exact) | ktune default | Kernel Tuner best | ahead / level / behind |")
    print("|---|---|---|---|---|")
    for b in budgets:
        r, d, t = (statistics.median(c) for c in cols[b])
        print(f"| {b} | {r:.3f} | {d:.3f} | {t:.3f} | {tally[b][0]} / {tally[b][1]} / {tally[b][2]} |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("t1", nargs="?")
    ap.add_argument("cache", nargs="?")
    ap.add_argument("--manifest", help="every space of a `ktune strategies compare` manifest instead of T1 CACHE")
    ap.add_argument("--root", help="where the manifest's relative paths are looked up first (then beside it)")
    ap.add_argument("--out-dir", help="with --manifest: one LABEL.json per space here (kept: a rerun resumes)")
    ap.add_argument("--ktune", default="build/ktune", help="ktune binary, to read a YAML spec's space")
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--max-fevals", type=int, default=200)
    ap.add_argument("--ktune-json", help="`ktune strategies compare --json` output on the same recording")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args()
    if not args.manifest and not (args.t1 and args.cache):
        ap.error("give T1 CACHE, or --manifest")

    if args.manifest:
        return run_manifest(args)
    import kernel_tuner
    summary = replay_space(args.t1, args.cache, args)
    kt = summary["strategies"]
    print(f"Kernel Tuner {kernel_tuner.__version__ if hasattr(kernel_tuner, '__version__') else ''}"
          f" simulation mode, {args.runs} runs, max_fevals {args.max_fevals}: median fraction of the optimum")
    print("| strategy | " + " | ".join(str(b) for b in BUDGETS if b <= args.max_fevals) + " | visited (median) |")
    print("|---|" + "---|" * (len([b for b in BUDGETS if b <= args.max_fevals]) + 1))
    for name, s in kt.items():
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in s["fraction_at_budget"].values()) +
              f" | {s['evals_median']} |")
    if args.ktune_json:
        with open(args.ktune_json) as f:
            kj = json.load(f)
        print("\nside by side (median fraction of the optimum)")
        print("| budget | random search (exact) | ktune default | ktune best | Kernel Tuner best |")
        print("|---|---|---|---|---|")
        default = kj.get("default_strategy", "model_rank")
        for b in BUDGETS:
            if b > args.max_fevals:
                continue
            rnd = kj["random_exact"]["fraction_at_budget"].get(str(b), {}).get("median")
            ours = {s["name"]: s["fraction_at_budget"][str(b)]["median"] for s in kj["strategies"]
                    if str(b) in s["fraction_at_budget"]}
            best_k = max(ours, key=ours.get)
            theirs = {n: s["fraction_at_budget"][str(b)] for n, s in kt.items()}
            best_t = max(theirs, key=theirs.get) if theirs else None
            d = ours.get(default)
            print(f"| {b} | {rnd:.3f} | {d:.3f} ({default}) | {ours[best_k]:.3f} ({best_k}) | "
                  + (f"{theirs[best_t]:.3f} ({best_t}) |" if best_t else "- |"))
        summary["ktune"] = args.ktune_json
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
