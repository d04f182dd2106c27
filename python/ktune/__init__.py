"""ktune from Python.

- ``tune_kernel`` and ``run_kernel``: Kernel Tuner's calls, with the same
  signatures and result shapes, run by ktune's engine (parallel NVRTC
  compiles, crash-isolated GPU worker, racing, every measurement stored in
  ktune's SQLite database);
- ``Kernel``: a tuned kernel as a callable on PyTorch or CuPy tensors;
- ``cli``: any ``ktune`` command, run in this process.

docs/python.md says more.
"""
import os as _os

from . import _ktune
from ._ktune import BadInput, Error

__version__ = "0.1.0"


def _executable() -> str:
    """The ktune executable installed with this package."""
    exe = _os.path.join(_os.path.dirname(__file__), "bin", "ktune")
    if not _os.access(exe, _os.X_OK):
        raise Error(f"the ktune executable is missing from the package ({exe}): reinstall ktune")
    return exe


# Compile children and the GPU worker are this executable, not the interpreter.
_ktune.set_worker_program(_executable())


def cli(*args: str, capture: bool = False):
    """Runs ``ktune ARGS...`` in this process; returns its exit status, or
    (status, standard output) with ``capture``."""
    import sys

    sys.stdout.flush()
    status, out = _ktune.run_command_line([str(a) for a in args], capture)
    return (status, out) if capture else status


from . import util  # noqa: E402
from .kernel import Kernel  # noqa: E402
from .kernel_tuner import run_kernel, tune_kernel  # noqa: E402

__all__ = ["tune_kernel", "run_kernel", "Kernel", "cli", "util", "Error", "BadInput"]
