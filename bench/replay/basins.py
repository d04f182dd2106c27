#!/usr/bin/env python3
"""The basins of an exhaustive recording: where a climb ends.

    bench/replay/basins.py CACHE.json[.gz] [--top 8]

CACHE is a Kernel Tuner cache of every configuration (the benchmark hub's
cachefiles). From every recorded configuration with a time, a climb takes the
best of its one-parameter changes (recorded ones only: the cache holds the
valid configurations) while that improves; the configuration it ends at is a
local optimum, and the configurations whose climbs end there are its basin.
Prints the number of local optima, the largest basins (fraction of the
optimum, size, configuration), the share of configurations whose climb ends
within 0.95 of the optimum, and the optimum's own basin: a needle whose basin
is small is found by a local search only from a start inside it, or by a
model that predicts it.
"""
import argparse
import collections

from kt_replay import load_cache  # an interrupted cache repaired as the replay repairs it


def load(path):
    data, _ = load_cache(path)
    names = data["tune_params_keys"]
    values = data["tune_params"]
    index = {p: {v: i for i, v in enumerate(values[p])} for p in names}
    times = {}
    for record in data["cache"].values():
        t = record.get("time")
        if isinstance(t, (int, float)) and t < 1e20:
            times[tuple(index[p][record[p]] for p in names)] = float(t)
    return names, values, times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cache")
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()
    names, values, times = load(args.cache)
    if not times:
        raise SystemExit(f"{args.cache}: no configuration with a time")
    sizes = [len(values[p]) for p in names]

    def neighbours(x):
        for k, n in enumerate(sizes):
            for j in range(n):
                if j != x[k]:
                    y = x[:k] + (j,) + x[k + 1:]
                    if y in times:
                        yield y

    end_of = {}

    def climb(x):
        path = []
        while x not in end_of:
            path.append(x)
            best = min(neighbours(x), key=times.__getitem__, default=x)
            if times[best] >= times[x]:
                end_of[x] = x
                break
            x = best
        for p in path:
            end_of[p] = end_of[x]
        return end_of[x]

    basins = collections.Counter(climb(x) for x in times)
    optimum = min(times, key=times.__getitem__)
    best = times[optimum]
    shown = lambda c: [values[p][c[k]] for k, p in enumerate(names)]
    print(f"{len(times)} configurations, {len(basins)} local optima")
    print("| fraction of the optimum | basin | local optimum |")
    print("|---|---|---|")
    for end, n in basins.most_common(args.top):
        print(f"| {best / times[end]:.3f} | {n} | {shown(end)} |")
    good = sum(n for end, n in basins.items() if best / times[end] >= 0.95)
    print(f"climbs ending within 0.95 of the optimum: {good} ({good / len(times):.1%})")
    print(f"the optimum {shown(optimum)}: basin {basins.get(optimum, 0)}")


if __name__ == "__main__":
    main()
