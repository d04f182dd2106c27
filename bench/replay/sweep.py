#!/usr/bin/env python3
"""A strategy's options tuned by replay: every combination of the given option
values, replayed with `ktune strategies compare` over a manifest of exhaustive
recordings (by default the design set), ranked by mean P-score, with the
replay throughput (evaluations per second of wall time) of the sweep.

    bench/replay/sweep.py --strategy vnd --grid wide=adjacent2,hamming2,both,none \\
        --grid restart=random,perturb [--manifest examples/data/design.manifest] \\
        [--runs 20] [--max-fevals 200] [--ktune build/ktune] [--json OUT]
    bench/replay/sweep.py --strategy portfolio --grid tpe.gamma=0.1,0.15,0.25   # a member's option, inside the default

Tune on the design sets (examples/data/design.manifest, and the spent
held-out set bench/replay/heldout.manifest with --root): the fresh held-out
set (bench/replay/fresh.manifest) is for reporting what was chosen.
"""
import argparse
import itertools
import json
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strategy", required=True)
    ap.add_argument("--grid", action="append", default=[], help="OPTION=V1,V2,... (repeatable)")
    ap.add_argument("--manifest", default="examples/data/design.manifest")
    ap.add_argument("--root", help="where the manifest's relative paths start")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--max-fevals", type=int, default=200)
    ap.add_argument("--ktune", default="build/ktune")
    ap.add_argument("--json", help="write the ranked table here")
    args = ap.parse_args()

    axes = []
    for g in args.grid:
        name, _, values = g.partition("=")
        if not name or not values:
            sys.exit(f"--grid {g!r}: want OPTION=V1,V2,...")
        axes.append([(name, v) for v in values.split(",")])
    labels = []
    for combo in itertools.product(*axes) if axes else [()]:
        labels.append(":".join([args.strategy] + [f"{k}={v}" for k, v in combo]))

    cmd = [args.ktune, "strategies", "compare", "--manifest", args.manifest, "--strategies", ",".join(labels),
           "--runs", str(args.runs), "--max-fevals", str(args.max_fevals), "--json"]
    if args.root:
        cmd += ["--root", args.root]
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - start
    data = json.loads(out)

    # Evaluations replayed: every run uses its whole budget unless the space is smaller.
    evals = sum(min(s["result"]["valid"], args.max_fevals) * args.runs * len(s["result"]["strategies"])
                for s in data["spaces"])
    rows = sorted(data["aggregate"], key=lambda a: -a["mean_p_score"])
    print(f"{len(labels)} settings x {len(data['spaces'])} spaces x {args.runs} runs, max_fevals "
          f"{args.max_fevals}: {evals} evaluations in {wall:.1f} s wall ({evals / wall:,.0f} evaluations/s)")
    print("| setting | mean P | lowest P | at 20 | at 50 | at 100 | at 200 | ahead / level / behind random (exact) |")
    print("|---|---|---|---|---|---|---|---|")
    for a in rows:
        f = a["median_fraction_at_budget"]
        v = a["vs_random_exact"]
        at = " | ".join(f"{f[b]:.3f}" if b in f else "-" for b in ("20", "50", "100", "200"))
        print(f"| `{a['name']}` | {a['mean_p_score']:.3f} | {a['min_p_score']:.3f} | {at} | "
              f"{v['ahead']} / {v['level']} / {v['behind']} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"command": cmd, "wall_s": wall, "evaluations": evals, "aggregate": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
