"""Kernel Tuner's helpers that its example scripts import from
``kernel_tuner.util``, with the same results."""
from __future__ import annotations

from typing import Any


def _valid(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def get_best_config(results: list[dict], objective: str, objective_higher_is_better: bool = False) -> dict:
    """The result whose `objective` is best, of those that ran (a failed
    configuration's time is a string such as "CompilationFailedConfig")."""
    valid = [r for r in results if _valid(r.get(objective))]
    if not valid:
        raise ValueError(f"no configuration has a value for {objective!r}")
    pick = max if objective_higher_is_better else min
    return pick(valid, key=lambda r: r[objective])


def get_config_string(params: dict, keys: list | None = None, units: dict | None = None) -> str:
    """'block_size_x=128, tile=4, ...' for the given keys (default all), with units."""
    out = []
    for k in keys if keys is not None else params.keys():
        unit = (units or {}).get(k, "")
        out.append(f"{k}={params[k]}{unit}")
    return ", ".join(out)
