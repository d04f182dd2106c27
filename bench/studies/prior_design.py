#!/usr/bin/env python3
"""Which first design to draw from a prior (the same kernel recorded on the
other GPU): the median best fraction of the optimum after 10 evaluations, by
simulation (4000 draws per design), for random search and for designs made of
the prior's k best plus random picks, or drawn from the prior's best share q.

    bench/studies/prior_design.py [examples/data]

Reads every <template>_h100.json / <template>_h200.json pair (Kernel Tuner
caches) and the template's objective from templates/<t>/<t>.yaml.
"""
import glob, json, os, random, re, statistics, sys

data = sys.argv[1] if len(sys.argv) > 1 else "examples/data"
root = os.path.dirname(os.path.abspath(data.rstrip("/")))
root = os.path.dirname(root) if os.path.basename(root) == "examples" else root


def objective(template):
    text = open(os.path.join(root, "templates", template, template + ".yaml")).read()
    obj = re.search(r"^objective:\s*(\S+)", text, re.M).group(1)
    hib = re.search(r"^higher_is_better:\s*true", text, re.M) is not None
    return obj, hib


def fractions(path, obj, hib):
    cache = json.load(open(path))["cache"]
    v = {k: e[obj] for k, e in cache.items() if isinstance(e.get(obj), (int, float))}
    best = max(v.values()) if hib else min(v.values())
    return {k: (x / best if hib else best / x) for k, x in v.items()}, list(cache)


designs = [("random", 1.0, 0), ("1 best + random", 1.0, 1), ("2 best + random", 1.0, 2),
           ("best 25%", 0.25, 0), ("best 10%", 0.10, 0), ("best + best 10%", 0.10, 1)]
print("dataset".ljust(18) + "".join(name.rjust(17) for name, _, _ in designs))
for path in sorted(glob.glob(os.path.join(data, "*_h[12]00.json"))):
    name = os.path.basename(path)[:-5]
    template, gpu = name.rsplit("_", 1)
    other = os.path.join(data, template + ("_h200" if gpu == "h100" else "_h100") + ".json")
    if not os.path.exists(other) or not os.path.exists(os.path.join(root, "templates", template)):
        continue
    obj, hib = objective(template)
    here, keys = fractions(path, obj, hib)
    there, _ = fractions(other, obj, hib)
    order = sorted(there, key=lambda k: -there[k])
    cells = []
    for _, share, k in designs:
        rng = random.Random(1)
        pool = order[k:max(k + 10, int(share * len(order)))] if share < 1 else [c for c in keys if c not in order[:k]]
        best = [max(here.get(c, 0) for c in order[:k] + rng.sample(pool, 10 - k)) for _ in range(4000)]
        cells.append(f"{statistics.median(best):.4f}")
    print(name.ljust(18) + "".join(c.rjust(17) for c in cells))
