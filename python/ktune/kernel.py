"""A tuned kernel as a Python callable: ktune::Launcher on tensors."""
from __future__ import annotations

import os
import sys
from typing import Any

from . import _ktune


def _current_stream(args) -> int:
    """The current CUDA stream of the framework the arguments come from
    (PyTorch's or CuPy's), else the default stream (0)."""
    for a in args:
        module = type(a).__module__.split(".")[0]
        if module == "torch" and getattr(a, "is_cuda", False):
            import torch

            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # an int, without a Stream object
            if raw is not None:
                return raw(a.get_device())
            return torch.cuda.current_stream(a.device).cuda_stream
        if module == "cupy":
            import cupy

            return cupy.cuda.get_current_stream().ptr
    return 0


class Kernel:
    """A kernel tuned by ktune, callable on device arrays.

    ``spec``: the tuning spec (YAML or T1); ``results``: a ktune database, a JSON
    export (``ktune export --format json``), a Kernel Tuner cache or T4 file, or
    None for the spec's defaults. The configuration is chosen for the current
    device and problem as the C++ Launcher chooses it (exact device, then the
    same compute capability, the same architecture, the most portable
    configuration, the one most often best, the spec's defaults), compiled once
    through the cubin cache, and launched on the current stream of PyTorch or
    CuPy (or ``stream=``)::

        rmsnorm = ktune.Kernel("rmsnorm.yaml", "tuned.db")
        rmsnorm(y, x, w, n, problem={"n": n})

    Arguments are the kernel's, in its order: tensors on the GPU (any object
    with DLPack: PyTorch, CuPy, JAX), passed without a copy and checked against
    the spec's element types; or raw device pointers (int); scalars are
    converted to the spec's types, range-checked.
    """

    def __init__(self, spec: str, results: str | None = None, *, kernel: str | None = None,
                 cache_dir: str | None = None, quiet: bool = False):
        self.spec = os.fspath(spec)
        self._launcher = _ktune.Launcher(self.spec, os.fspath(results) if results else "", kernel or "",
                                         cache_dir or "", quiet)

    @property
    def parameters(self) -> list[tuple[str, str, bool]]:
        """The kernel's parameters: (name, element type, is a pointer)."""
        return self._launcher.parameters

    @staticmethod
    def _problem(problem: dict[str, int] | None) -> list[tuple[str, int]]:
        return [(str(k), int(v)) for k, v in (problem or {}).items()]

    def choose(self, problem: dict[str, int] | None = None, *, device_name: str,
               compute_capability: int) -> dict[str, Any]:
        """The choice for a device given by name and compute capability (90 for
        sm_90), without a GPU."""
        return self._launcher.choose(self._problem(problem), device_name, compute_capability)

    def prepare(self, problem: dict[str, int] | None = None) -> dict[str, Any]:
        """Chooses, compiles and loads for the current device; returns the choice."""
        return self._launcher.prepare(self._problem(problem))

    def __call__(self, *args: Any, problem: dict[str, int] | None = None, stream: Any = None) -> None:
        if stream is None:
            s = _current_stream(args)
        elif isinstance(stream, int):
            s = stream
        else:
            s = getattr(stream, "cuda_stream", None) or getattr(stream, "ptr")
        self._launcher.launch(self._problem(problem), int(s), list(args))
