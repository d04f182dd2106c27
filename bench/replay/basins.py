#!/usr/bin/env python3
"""The basins of an exhaustive recording: where a climb ends.

    bench/replay/basins.py CACHE.json[.gz] [--top 8] [--repaired]

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

With --repaired a step may also be a one-parameter change the restrictions
forbid made valid by the nearest value of one other parameter (ktune's
`neighbour: repaired`; the cache's configurations, failed ones included,
are the valid ones): x 16 -> 32 under x*y <= 1024 takes y 64 -> 32.
"""
import argparse
import collections

from kt_replay import load_cache  # an interrupted cache repaired as the replay repairs it


def load(path):
    data, _ = load_cache(path)
    names = data["tune_params_keys"]
    values = data["tune_params"]
    index = {p: {v: i for i, v in enumerate(values[p])} for p in names}
    times, valid = {}, set()
    for record in data["cache"].values():
        config = tuple(index[p][record[p]] for p in names)
        valid.add(config)
        t = record.get("time")
        if isinstance(t, (int, float)) and t < 1e20:
            times[config] = float(t)
    return names, values, times, valid


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cache")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--repaired", action="store_true", help="repaired one-parameter steps too")
    args = ap.parse_args()
    names, values, times, valid = load(args.cache)
    if not times:
        raise SystemExit(f"{args.cache}: no configuration with a time")
    sizes = [len(values[p]) for p in names]

    def repairs(x, y, k):
        # The nearest values of one other parameter that make y valid, every
        # parameter reaching one at that distance.
        for d in range(1, max(sizes)):
            found = [z for m, n in enumerate(sizes) if m != k for w in (x[m] - d, x[m] + d) if 0 <= w < n
                     for z in [y[:m] + (w,) + y[m + 1:]] if z in valid]
            if found:
                return found
        return []

    def neighbours(x):
        for k, n in enumerate(sizes):
            for j in range(n):
                if j != x[k]:
                    y = x[:k] + (j,) + x[k + 1:]
                    if y in times:
                        yield y
                    elif args.repaired and y not in valid:
                        yield from (z for z in repairs(x, y, k) if z in times)

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
