#!/usr/bin/env python3
"""How often the racing rule would stop a configuration that belongs near the top.

Replays each exhaustive recording (Kernel Tuner cache with every sample kept,
examples/data/*.json) in its recorded order, as a brute-force run measured it:
the best median so far is the minimum over the configurations measured fully
so far; a configuration whose first K samples all lie above (1 + MARGIN) x
that best is stopped (tuner/gpu/measure.h, race_lost); with --first M, one
whose first sample alone lies above (1 + M) x that best is stopped after it
(the one-sample rule, race_first_above_ms). A false stop is a
stopped configuration whose full median ranks in the top 1% of the space.
Prints, per recording and margin, the stopped share, the false stops and the
share of sampled GPU time racing saves.

    bench/studies/racing_false_stops.py [--k 3] [--margins 0.05,0.1,0.2] [--first 1.0] examples/data/*.json
"""
import argparse
import json
import statistics
import sys


def configs(path):
    d = json.load(open(path))
    out = []
    for rec in d["cache"].values():
        t = rec.get("times")
        if isinstance(t, list) and t and all(isinstance(x, (int, float)) for x in t):
            out.append([float(x) for x in t])
    return out


def study(samples, k, margin, first=None):
    medians = [statistics.median(s) for s in samples]
    ranked = sorted(medians)
    top = ranked[max(0, len(ranked) // 100 - 1)] if len(ranked) >= 100 else ranked[0]
    best = 0.0
    stopped = false_stops = 0
    spent = saved = 0.0
    for s, med in zip(samples, medians):
        total = sum(s)
        spent += total
        used = 0
        if best > 0 and first is not None and s[0] > best * (1 + first):
            used = 1
        elif best > 0 and len(s) >= k and min(s[:k]) > best * (1 + margin):
            used = k
        if used:
            stopped += 1
            saved += total - sum(s[:used])
            if med <= top:
                false_stops += 1
            continue
        best = med if best == 0 else min(best, med)
    return stopped, false_stops, saved / spent if spent else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--margins", default="0.05,0.1,0.2")
    ap.add_argument("--first", type=float, default=None,
                    help="margin of the one-sample rule (off when not given)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    margins = [float(m) for m in a.margins.split(",")]
    print("| recording | configurations | " + " | ".join(
        f"margin {m:g}: stopped / false stops in the top 1% / sampled time saved" for m in margins) + " |")
    print("| --- | ---: |" + " ---: |" * len(margins))
    totals = {m: [0, 0] for m in margins}
    n_all = 0
    for f in a.files:
        s = configs(f)
        if len(s) < 20:
            continue
        n_all += len(s)
        cells = []
        for m in margins:
            st, fs, sv = study(s, a.k, m, a.first)
            totals[m][0] += st
            totals[m][1] += fs
            cells.append(f"{st} / {fs} / {100 * sv:.0f}%")
        print(f"| {f.split('/')[-1]} | {len(s)} | " + " | ".join(cells) + " |")
    print(f"| all | {n_all} | " + " | ".join(f"{totals[m][0]} / {totals[m][1]} / -" for m in margins) + " |")


if __name__ == "__main__":
    sys.exit(main())
