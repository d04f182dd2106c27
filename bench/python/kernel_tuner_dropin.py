"""The drop-in check: Kernel Tuner's published CUDA example scripts, run as
published with Kernel Tuner and with only their import lines changed to
ktune, one after the other on the same GPU. Prints wall time and best
configuration of each.

    python3 bench/python/kernel_tuner_dropin.py EXAMPLES_DIR OUT_DIR [NAME...] [--timeout S]

EXAMPLES_DIR holds Kernel Tuner's examples/cuda (scripts and kernels). Kernel
Tuner runs on its CuPy backend (the host has no PyCUDA): a sitecustomize in
its run sets lang="cupy" where the script gives none, and gives its CuPy
backend the device UUID in the length it expects; nothing else changes.
"""
import os
import re
import shutil
import subprocess
import sys
import time

args = [a for a in sys.argv[1:] if not a.startswith("--")]
timeout = 300
if "--timeout" in sys.argv:
    timeout = int(sys.argv[sys.argv.index("--timeout") + 1])
    args.remove(str(timeout))
examples, out = args[0], args[1]
names = args[2:] or ["stencil", "matmul", "spmv", "expdist"]
os.makedirs(out, exist_ok=True)

KT_SITE = '''
import cupy
# Kernel Tuner 1.5's CuPy backend reads the device's UUID as 16 bytes; CuPy 14
# gives it another length on this host (ValueError: bytes is not a 16-char string).
_properties = cupy.cuda.runtime.getDeviceProperties
def _sixteen(device):
    p = dict(_properties(device))
    u = p.get("uuid")
    if isinstance(u, str):
        u = u.encode()
    if isinstance(u, bytes) and len(u) != 16:
        p["uuid"] = u[:16].ljust(16, b"\\0")
    return p
cupy.cuda.runtime.getDeviceProperties = _sixteen
import kernel_tuner, kernel_tuner.interface
def _cupy(f):
    def wrapped(*a, **kw):
        if kw.get("lang") is None:
            kw["lang"] = "cupy"
        return f(*a, **kw)
    return wrapped
kernel_tuner.tune_kernel = kernel_tuner.interface.tune_kernel = _cupy(kernel_tuner.interface.tune_kernel)
kernel_tuner.run_kernel = kernel_tuner.interface.run_kernel = _cupy(kernel_tuner.interface.run_kernel)
'''


def to_ktune(text: str) -> str:
    text = re.sub(r"^(\s*)import kernel_tuner\s*$", r"\1import ktune as kernel_tuner", text, flags=re.M)
    text = re.sub(r"^(\s*)from kernel_tuner(\.util)? import", r"\1from ktune\2 import", text, flags=re.M)
    return text


def best_line(log: str):
    lines = [l for l in log.splitlines() if "best performing configuration" in l]
    return lines[-1].split(":", 1)[1].strip() if lines else None


rows = []
for name in names:
    for tool in ("kernel_tuner", "ktune"):
        work = os.path.join(out, f"{name}-{tool}")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        for f in os.listdir(examples):
            if f.endswith((".cu", ".cuh", ".h")):
                shutil.copy(os.path.join(examples, f), work)
        with open(os.path.join(examples, name + ".py")) as f:
            script = f.read()
        env = dict(os.environ, PYTHONUNBUFFERED="1", KTUNE_DB=os.path.join(work, "ktune.db"))
        if tool == "ktune":
            changed = to_ktune(script)
            assert changed != script, f"{name}: no import line to change"
            script = changed
        else:
            with open(os.path.join(work, "sitecustomize.py"), "w") as f:
                f.write(KT_SITE)
            env["PYTHONPATH"] = work + os.pathsep + env.get("PYTHONPATH", "")
        with open(os.path.join(work, name + ".py"), "w") as f:
            f.write(script)
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, name + ".py"], cwd=work, env=env, capture_output=True, text=True,
                               timeout=timeout)
            log, status = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            log = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            status = "timeout"
        wall = time.perf_counter() - t0
        with open(os.path.join(out, f"{name}-{tool}.log"), "w") as f:
            f.write(log)
        rows.append((name, tool, status, wall, best_line(log) or (log.strip().splitlines() or ["?"])[-1][:100]))
        print(f"{name:10} {tool:13} status {status!s:8} {wall:7.1f} s  {rows[-1][4]}", flush=True)

print("\nexample    tool          status    wall s  best")
for r in rows:
    print(f"{r[0]:10} {r[1]:13} {r[2]!s:8} {r[3]:7.1f}  {r[4]}")
