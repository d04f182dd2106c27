#!/usr/bin/env python3
"""A slice of a T1 space: the T1 file with some tunable parameters restricted
to the values given, written with a copy of its kernel file into OUT (as
OUT/slice.json), for scripts that time a part of a large space.

    bench/gpu/t1_slice.py T1.json OUT [PARAM=v1,v2,...]...
"""
import json
import os
import shutil
import sys

t1, out, *restrict = sys.argv[1:]
spec = json.load(open(t1))
params = {p["Name"]: p for p in spec["ConfigurationSpace"]["TuningParameters"]}
for r in restrict:
    name, values = r.split("=", 1)
    params[name]["Values"] = "[" + values + "]"
os.makedirs(out, exist_ok=True)
kernel = spec["KernelSpecification"]["KernelFile"]
shutil.copy(os.path.join(os.path.dirname(os.path.abspath(t1)), kernel), os.path.join(out, os.path.basename(kernel)))
spec["KernelSpecification"]["KernelFile"] = os.path.basename(kernel)
json.dump(spec, open(os.path.join(out, "slice.json"), "w"), indent=1)
