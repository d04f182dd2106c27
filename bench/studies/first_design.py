#!/usr/bin/env python3
"""Does a space-filling first design beat a random one, without a prior? The
median best fraction of the optimum after 10 evaluations (an 8-point design,
then 2 random picks) by simulation, for a random design and for two that
spread their points over the parameters' values:

- value-balanced: each point the configuration whose values were used least
  so far (a Latin-hypercube analogue on the valid configurations);
- stratified: the valid configurations in lexicographic order (parameters in
  random order) cut into 8 strata, one random pick from each; every
  configuration keeps the same chance, as in a random design.

    bench/studies/first_design.py [examples/data] [draws]

Reads every Kernel Tuner cache <template>_<gpu>.json whose template is in
templates/ and the template's objective from templates/<t>/<t>.yaml.
"""
import glob, json, os, random, re, statistics, sys
from math import comb

data = sys.argv[1] if len(sys.argv) > 1 else "examples/data"
draws = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
root = os.path.dirname(os.path.abspath(data.rstrip("/")))
root = os.path.dirname(root) if os.path.basename(root) == "examples" else root
DESIGN, BUDGET = 8, 10


def load(path, template):
    text = open(os.path.join(root, "templates", template, template + ".yaml")).read()
    obj = re.search(r"^objective:\s*(\S+)", text, re.M).group(1)
    hib = re.search(r"^higher_is_better:\s*true", text, re.M) is not None
    d = json.load(open(path))
    keys, tp = d["tune_params_keys"], d["tune_params"]
    entries = list(d["cache"].values())
    v = [e.get(obj) if isinstance(e.get(obj), (int, float)) else None for e in entries]
    best = max(x for x in v if x is not None) if hib else min(x for x in v if x is not None)
    frac = [0.0 if x is None else (x / best if hib else best / x) for x in v]
    coords = [tuple(tp[k].index(e[k]) for k in keys) for e in entries]
    return coords, frac


def exact_median(frac, k):
    """Median best of k picks without replacement, computed exactly."""
    s, n = sorted(frac), len(frac)
    return next(s[i] for i in range(n) if comb(i + 1, k) / comb(n, k) >= 0.5)


def random_design(coords, rng):
    return rng.sample(range(len(coords)), DESIGN)


def value_balanced(coords, rng):
    used, out = [dict() for _ in coords[0]], []
    for _ in range(DESIGN):
        score = {i: sum(u.get(c[d], 0) for d, u in enumerate(used) for c in [coords[i]])
                 for i in range(len(coords)) if i not in out}
        low = min(score.values())
        pick = rng.choice([i for i, s in score.items() if s == low])
        out.append(pick)
        for d, u in enumerate(used):
            u[coords[pick][d]] = u.get(coords[pick][d], 0) + 1
    return out


def stratified(coords, rng):
    order = rng.sample(range(len(coords[0])), len(coords[0]))
    idx = sorted(range(len(coords)), key=lambda i: tuple(coords[i][d] for d in order))
    n = len(idx)
    return [idx[rng.randrange(j * n // DESIGN, (j + 1) * n // DESIGN)] for j in range(DESIGN)]


designs = [("random", random_design), ("value-balanced", value_balanced), ("stratified", stratified)]
print("dataset".ljust(20) + "exact random".rjust(14) + "".join(n.rjust(16) for n, _ in designs))
for path in sorted(glob.glob(os.path.join(data, "*.json"))):
    name = os.path.basename(path)[:-5]
    template = name.rsplit("_", 1)[0]
    if not os.path.exists(os.path.join(root, "templates", template)):
        continue
    coords, frac = load(path, template)
    cells = [f"{exact_median(frac, BUDGET):.4f}"]
    for _, design in designs:
        rng = random.Random(1)
        best = []
        for _ in range(draws):
            picks = design(coords, rng)
            rest = [i for i in rng.sample(range(len(coords)), BUDGET + DESIGN) if i not in picks]
            best.append(max(frac[i] for i in picks + rest[:BUDGET - DESIGN]))
        cells.append(f"{statistics.median(best):.4f}")
    print(name.ljust(20) + cells[0].rjust(14) + "".join(c.rjust(16) for c in cells[1:]), flush=True)
