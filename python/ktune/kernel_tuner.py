"""Kernel Tuner's ``tune_kernel`` and ``run_kernel``, run by ktune.

A call is translated into a ktune spec (YAML, docs/spec.md) and the arguments'
data files, in a temporary folder, and run by ktune's own command line in this
process (``ktune tune``); the results are read back from ktune's database and
returned in Kernel Tuner's shapes. Every measurement stays in the database
(``db=``, else ``$KTUNE_DB``, else ``./ktune.db``), so ``ktune best``,
``compare``, ``report`` and ``export`` see results tuned from Python.

Where Kernel Tuner takes something ktune cannot do, the call is refused with
an error naming it (BadInput); nothing is dropped silently.
"""
from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
import tempfile
from typing import Any

import numpy as np

from . import _ktune
from ._arrays import dtype_of, host_array, spec_type

BadInput = _ktune.BadInput
Error = _ktune.Error

_CUDA_LANGS = {None, "CUDA", "CUPY", "NVCUDA"}
# Restrictions given as Python functions are tried on every combination (as
# Kernel Tuner does); about a microsecond each, so a few seconds at most.
_MAX_ENUMERATED = 5_000_000


def _refuse(name: str, why: str) -> None:
    raise BadInput(f"tune_kernel: {name}: {why}")


def _expression(value: Any, what: str) -> Any:
    """A literal number or an expression string, as a spec takes it."""
    if callable(value):
        _refuse(what, "a Python function has no ktune counterpart; give an expression string over the "
                      "parameters, e.g. \"block_size_x * 4\"")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str):
        return value
    _refuse(what, f"expected a number or an expression string, not {type(value).__name__}")


def _expressions(value: Any, what: str) -> list:
    if isinstance(value, (list, tuple)):
        return [_expression(v, what) for v in value]
    return [_expression(value, what)]


def _param_value(v: Any, name: str) -> Any:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, str):
        return v
    _refuse("tune_params", f"parameter {name!r}: value {v!r} is not a number, bool or string")


class _Translation:
    """A Kernel Tuner call as a ktune spec in a folder of its own."""

    def __init__(self, folder: str):
        self.folder = folder
        self.spec: dict[str, Any] = {}
        self.notes: list[str] = []
        self.arrays: list[np.ndarray | None] = []
        self.functions: list = []  # restrictions given as Python functions

    def kernel(self, kernel_name, kernel_source, lang, compiler, compiler_options, defines):
        if lang is not None and str(lang).upper() not in _CUDA_LANGS:
            _refuse("lang", f"{lang!r}: ktune tunes CUDA kernels only")
        if not isinstance(kernel_name, str) or not kernel_name:
            _refuse("kernel_name", "must be a non-empty string")
        sources = kernel_source if isinstance(kernel_source, (list, tuple)) else [kernel_source]
        if not sources or callable(sources[0]):
            _refuse("kernel_source", "a code generator function has no ktune counterpart; give the code or a file")
        first = sources[0]
        if not isinstance(first, str):
            _refuse("kernel_source", f"must be a string or a filename, not {type(first).__name__}")
        if "\n" not in first and os.path.isfile(first):
            source = os.path.abspath(first)
        else:
            source = os.path.join(self.folder, "kernel.cu")
            with open(source, "w") as f:
                f.write(first)
        kernel: dict[str, Any] = {"name": kernel_name, "source": source}
        options = list(compiler_options or [])
        # Other files of a list are headers the kernel includes: their folders are searched.
        for extra in sources[1:]:
            if isinstance(extra, str) and os.path.isfile(extra):
                options.append("-I" + os.path.dirname(os.path.abspath(extra)))
        for name, value in (defines or {}).items():
            if callable(value):
                _refuse("defines", f"{name}: a Python function has no ktune counterpart; give a value")
            options.append(f"-D{name}={value}")
        if options:
            kernel["compiler_options"] = [str(o) for o in options]
        if compiler is not None:
            if str(compiler).lower() not in ("nvrtc", "nvcc"):
                _refuse("compiler", f"{compiler!r}: ktune compiles with nvrtc or nvcc")
            kernel["compiler"] = str(compiler).lower()
        self.spec["kernel"] = kernel

    def launch(self, problem_size, grid_div_x, grid_div_y, grid_div_z, block_size_names, smem_args, tune_params):
        if callable(problem_size):
            _refuse("problem_size", "a function has no ktune counterpart; give integers or parameter names")
        self.spec["problem_size"] = _expressions(problem_size, "problem_size")
        for axis, div in (("x", grid_div_x), ("y", grid_div_y), ("z", grid_div_z)):
            if div is not None:
                self.spec[f"grid_div_{axis}"] = _expressions(div, f"grid_div_{axis}")
        if block_size_names is not None:
            # A name that is no parameter is 1, with the spec's note (Kernel Tuner's warning).
            self.spec["block_size_names"] = [str(n) for n in block_size_names]
        if smem_args:
            for key in smem_args:
                if key != "size":
                    _refuse("smem_args", f"{key!r}: ktune takes only 'size'")
            self.spec["shared_memory"] = _expression(smem_args["size"], "smem_args['size']")

    def tune_params(self, tune_params, restrictions):
        if not isinstance(tune_params, dict) or not tune_params:
            _refuse("tune_params", "must be a non-empty dict of parameter name -> list of values")
        params = {}
        for name, values in tune_params.items():
            values = list(values) if not isinstance(values, str) else values
            params[str(name)] = values if isinstance(values, str) else [_param_value(v, name) for v in values]
        self.spec["tune_params"] = params
        if restrictions is None:
            return
        items = restrictions if isinstance(restrictions, (list, tuple)) else [restrictions]
        out = []
        for r in items:
            if callable(r):
                self.functions.append(r)
            elif isinstance(r, str):
                out.append(r)
            else:
                _refuse("restrictions", f"expected strings or functions, not {type(r).__name__}")
        if out:
            self.spec["restrictions"] = out

    def listed(self, tune_params) -> str | None:
        """With restrictions that are Python functions: every configuration of
        the Cartesian product they allow, as Kernel Tuner enumerates them, in a
        file for `ktune tune --configs` (brute_force: measured in this order)
        or `--within` (another strategy searches among them); the spec's
        string restrictions still apply there. None without such functions."""
        if not self.functions:
            return None
        names = list(tune_params)
        lists = [list(v) for v in tune_params.values()]
        total = 1
        for values in lists:
            total *= len(values)
        if total > _MAX_ENUMERATED:
            _refuse("restrictions", f"a Python function over {total:,} combinations is too many to try one by one "
                                    f"(at most {_MAX_ENUMERATED:,}); give it as an expression string")
        allowed = []
        for combination in itertools.product(*lists):
            p = dict(zip(names, combination))
            if all(f(p) for f in self.functions):
                allowed.append({k: _param_value(v, k) for k, v in p.items()})
        path = os.path.join(self.folder, "configs.json")
        with open(path, "w") as f:
            json.dump(allowed, f)
        return path

    def arguments(self, arguments, answer, atol, cmem_args, data: bool):
        if not isinstance(arguments, (list, tuple)):
            _refuse("arguments", "must be a list")
        if answer is not None and len(answer) != len(arguments):
            _refuse("answer", f"has {len(answer)} entries for {len(arguments)} arguments")
        specs, reference = [], []
        for i, value in enumerate(arguments):
            name = f"arg{i}"
            expected = answer[i] if answer is not None else None
            array = host_array(value)
            if array is None:
                if not isinstance(value, np.generic):
                    _refuse("arguments", f"argument {i} is a Python {type(value).__name__}: give a NumPy scalar "
                                         "(numpy.int32(n), numpy.float32(x)) so its C type is known")
                entry = {"name": name, "type": spec_type(value.dtype, f"argument {i}"), "value": value.item()}
                if expected is not None:
                    _refuse("answer", f"entry {i} is for a scalar argument")
                self.arrays.append(None)
            else:
                entry = self._buffer(name, array, data, f"argument {i}")
                if expected is not None:
                    expected = np.ascontiguousarray(np.asarray(host_array(expected)), dtype=array.dtype)
                    if expected.size != array.size:
                        _refuse("answer", f"entry {i} has {expected.size} elements, argument {i} has {array.size}")
                    entry["output"] = True
                    reference.append(expected)
                self.arrays.append(array)
            specs.append(entry)
        for cname, value in (cmem_args or {}).items():
            array = host_array(value)
            if array is None:
                _refuse("cmem_args", f"{cname}: must be an array")
            entry = self._buffer(cname, array, True, f"cmem_args[{cname!r}]")
            entry["memory"] = "constant"
            specs.append(entry)
        self.spec["arguments"] = specs
        if reference:
            path = os.path.join(self.folder, "answer.bin")
            with open(path, "wb") as f:
                for r in reference:
                    f.write(r.tobytes())
            self.spec["verify"] = {"reference": {"file": path}, "atol": float(atol)}

    def _buffer(self, name, array, data, what):
        entry = {"name": name, "type": spec_type(dtype_of(array), what) + "*", "size": int(array.size)}
        if array.size == 0:
            # Kernel Tuner passes an empty array (a kernel that reads none of it);
            # a spec buffer holds at least one element: one zero.
            entry.update(size=1, fill="zeros")
            return entry
        if data:
            path = os.path.join(self.folder, name + ".bin")
            np.ascontiguousarray(array).tofile(path)
            entry.update(fill="file", path=path)
        else:
            entry["fill"] = "zeros"
        return entry

    def write(self) -> str:
        path = os.path.join(self.folder, "spec.yaml")
        with open(path, "w") as f:
            # JSON is YAML's flow style; the comment keeps the file from reading as T1 JSON.
            f.write("# written by ktune's Python package from a Kernel Tuner call\n")
            f.write(json.dumps(self.spec, indent=1))
            f.write("\n")
        return path


def _plain(value: Any) -> Any:
    """NumPy scalars (in a tuple or list) as Python's, so env stays JSON-serialisable."""
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value.item() if isinstance(value, np.generic) else value


def _lanes(array: np.ndarray) -> np.ndarray:
    """A complex array as its float lanes (the spec's float2 or double2 buffer)."""
    if array.dtype == np.complex64:
        return array.view(np.float32)
    if array.dtype == np.complex128:
        return array.view(np.float64)
    return array


def _kernel_tuner_status(status: str) -> str | None:
    return {"ok": None, "invalid": "InvalidConfig", "compile_error": "CompilationFailedConfig"}.get(
        status, "RuntimeFailedConfig")


def _results(rows: list[dict], param_names: list[str], metrics: dict) -> list[dict]:
    """ktune's stored rows of one run, as Kernel Tuner's results list: one dict
    per configuration (the last row of a configuration measured again)."""
    by_config: dict[tuple, dict] = {}
    for row in sorted(rows, key=lambda r: r["id"]):
        r: dict[str, Any] = {name: row["config"].get(name) for name in param_names}
        failed = _kernel_tuner_status(row["status"])
        if failed:
            r["time"] = failed
        else:
            r["time"] = row["time_ms"]
            r["times"] = row.get("samples", [])
            for k, v in (row.get("metrics") or {}).items():
                r[k] = v
        r["compile_time"] = row.get("compile_ms", 0.0)
        r["verification_time"] = 0
        r["benchmark_time"] = row.get("benchmark_ms", 0.0)
        r["strategy_time"] = 0
        r["framework_time"] = row.get("framework_ms", 0.0)
        r["timestamp"] = row.get("timestamp")
        r["ktune_status"] = row["status"]
        if row.get("reason"):
            r["ktune_reason"] = row["reason"]
        if not failed:
            for name, fn in metrics.items():
                r[name] = fn(r)
        by_config[tuple(r[n] for n in param_names)] = r
    return list(by_config.values())


def _run_rows(rows: list[dict], summary: dict, param_names: list[str]) -> list[dict]:
    """The stored rows of what the run evaluated: its own, and those it took
    from the database instead of measuring (Kernel Tuner's cache hits)."""
    def key(config):
        return tuple(config.get(n) for n in param_names)

    own = [r for r in rows if r.get("run_id") == summary["run_id"]]
    sizes = {tuple(r["problem_size"]) for r in own}
    reused = {key(c) for c in summary.get("reused_configs", [])}
    taken = [r for r in rows if r.get("run_id") != summary["run_id"] and key(r["config"]) in reused
             and (not sizes or tuple(r["problem_size"]) in sizes)]
    return taken + own


def _run(args: list[str], capture: bool, ran_but_failed_is_ok: bool = False) -> str:
    sys.stdout.flush()
    status, out = _ktune.run_command_line(args, capture)
    if status == 1 and ran_but_failed_is_ok:
        return out
    if status != 0:
        # ktune printed why on stderr; its exit status says whose fault it was.
        kind = BadInput if status == 2 else Error
        raise kind(f"`ktune {' '.join(args)}` exited with status {status} (its message is above)")
    return out


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None,
                verbose=False, lang=None, device=0, platform=0, smem_args=None, cmem_args=None,
                texmem_args=None, compiler=None, compiler_options=None, defines=None, log=None,
                iterations=7, block_size_names=None, quiet=False, strategy=None, strategy_options=None,
                cache=None, metrics=None, simulation_mode=None, parallel=None, observers=None,
                objective=None, objective_higher_is_better=None, objectives=None, seed=None, *,
                db: str | None = None):
    """Kernel Tuner 1.5's ``tune_kernel``, run by ktune. Returns ``(results,
    env)`` in Kernel Tuner's shapes. ``db``: ktune's database (else
    ``$KTUNE_DB``, else ``./ktune.db``), where every measurement is stored."""
    if verify is not None:
        _refuse("verify", "a Python check of the outputs has no ktune counterpart yet; give `answer` "
                          "(with `atol`)")
    if texmem_args:
        _refuse("texmem_args", "texture memory has no ktune counterpart")
    if objectives:
        _refuse("objectives", "ktune tunes one objective: give `objective` (and `objective_higher_is_better`)")
    energy = False
    for obs in observers or []:
        if type(obs).__name__ == "NVMLObserver":
            energy = True
        else:
            _refuse("observers", f"{type(obs).__name__}: ktune measures energy itself (an NVMLObserver asks "
                                 "for it); other observers have no counterpart")
    python_metrics, spec_metrics = {}, {}
    for name, m in (metrics or {}).items():
        if callable(m):
            python_metrics[name] = m
        elif isinstance(m, str):
            spec_metrics[name] = m
        else:
            _refuse("metrics", f"{name}: a function of the result or an expression string")
    if objective in python_metrics:
        _refuse("objective", f"{objective!r} is a Python metric, computed after the run; to tune by it give "
                             "it as an expression string over time_ms and the parameters")
    if simulation_mode and not cache:
        _refuse("simulation_mode", "needs `cache`: the Kernel Tuner cache file to replay")

    folder = tempfile.mkdtemp(prefix="ktune-tune-kernel-")
    try:
        t = _Translation(folder)
        t.kernel(kernel_name, kernel_source, lang, compiler, compiler_options, defines)
        t.tune_params(tune_params, restrictions)
        t.launch(problem_size, grid_div_x, grid_div_y, grid_div_z, block_size_names, smem_args, tune_params)
        t.arguments(arguments, answer, atol, cmem_args, data=not simulation_mode)
        if spec_metrics:
            t.spec["metrics"] = spec_metrics
        if objective is not None:
            t.spec["objective"] = objective
        if objective_higher_is_better is not None:
            t.spec["higher_is_better"] = bool(objective_higher_is_better)
        if iterations != 7:
            t.spec["iterations"] = int(iterations)
        # Kernel Tuner's default is to try every configuration.
        t.spec["strategy"] = strategy if strategy is not None else "brute_force"
        listed = t.listed(tune_params)
        if strategy_options:
            t.spec["strategy_options"] = {k: v for k, v in strategy_options.items()}
        spec = t.write()

        cache_path = None
        if cache:
            cache_path = cache if str(cache).endswith(".json") else str(cache) + ".json"
        common = ["--db", db] if db else []
        args = ["tune", spec, "--json", *common]
        if seed is not None:
            args += ["--seed", str(int(seed))]
        if listed:
            # brute_force measures them in Kernel Tuner's order; another strategy searches among them.
            args += ["--configs" if t.spec["strategy"] == "brute_force" else "--within", listed]
        if simulation_mode:
            args += ["--simulate", cache_path]
        else:
            if parallel:
                args += ["--gpus", "all"]
            else:
                args += ["--gpu", str(int(device))]
            if energy:
                args += ["--energy"]
            if cache_path and os.path.exists(cache_path):
                # Kernel Tuner measures nothing its cache holds: import it, then the run reuses it.
                _run(["import", cache_path, *common], capture=True)
        # Exit status 1 with a summary: the run went through and no configuration
        # ran correctly. Kernel Tuner's caller gets the failures as results.
        summary = json.loads(_run(args, capture=True, ran_but_failed_is_ok=True) or "null")
        if not summary:
            raise Error(f"`ktune {' '.join(args)}` failed (its message is above)")
        rows = json.loads(_run(["results", spec, "--json", "--samples", *common,
                                "--device", summary["device"]], capture=True))
        rows = _run_rows(rows, summary, list(tune_params))
        if not simulation_mode and cache_path:
            _run(["export", "--format", "kernel-tuner", "-o", cache_path, "--kernel", kernel_name,
                  "--device", summary["device"], *common], capture=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    param_names = list(tune_params)
    results = _results(rows, param_names, python_metrics)
    best = summary["best"][0]["config"] if summary.get("best") else None
    env = {
        "device_name": summary["device"],
        "kernel_name": kernel_name,
        "problem_size": _plain(problem_size),
        "tune_params": tune_params,
        "iterations": iterations,
        "objective": summary.get("objective", "time"),
        "objective_higher_is_better": bool(objective_higher_is_better),
        "strategy": strategy or "brute_force",
        "strategy_options": strategy_options or {},
        "simulation_mode": bool(simulation_mode),
        "best_config": best,
        "total_compile_time": sum(r["compile_time"] for r in results),
        "total_benchmark_time": sum(r["benchmark_time"] for r in results),
        "total_framework_time": sum(r["framework_time"] for r in results),
        "ktune": summary,
    }
    if not quiet:
        if best is not None:
            top = summary["best"][0]
            print(f"best performing configuration: {', '.join(f'{k}={v}' for k, v in best.items())}, "
                  f"time={top['time_ms']:.4f} ms ({summary['evaluations']} evaluated, "
                  f"{'replayed from ' + summary['source'] if summary.get('replay') else summary['device']})")
        else:
            print("no valid configuration was found")
    return results, env


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None,
               texmem_args=None, compiler=None, compiler_options=None, defines=None, block_size_names=None,
               quiet=False, log=None):
    """Kernel Tuner's ``run_kernel``: compiles the kernel for one configuration
    (``params``), copies the arguments to the GPU, runs it once and returns every
    argument after the run (new NumPy arrays; scalars as given)."""
    if texmem_args:
        _refuse("texmem_args", "texture memory has no ktune counterpart")
    if device != 0:
        _refuse("device", "run_kernel runs on the current CUDA device (device 0 unless a context is current)")
    folder = tempfile.mkdtemp(prefix="ktune-run-kernel-")
    try:
        t = _Translation(folder)
        t.kernel(kernel_name, kernel_source, lang, compiler, compiler_options, defines)
        tune_params = {k: [v] for k, v in params.items()}
        t.tune_params(tune_params, None)
        t.launch(problem_size, grid_div_x, grid_div_y, grid_div_z, block_size_names, smem_args, tune_params)
        t.arguments(arguments, None, 0, cmem_args, data=False)
        spec = t.write()
        launcher = _ktune.Launcher(spec, quiet=True)
        hosts = [a if arr is None else _lanes(arr) for a, arr in zip(arguments, t.arrays)]
        return launcher.run_host([], hosts)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
