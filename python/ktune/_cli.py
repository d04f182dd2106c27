"""The `ktune` command that pip puts on PATH: the executable bundled in the package."""
import os
import sys

from . import _executable


def main() -> None:
    exe = _executable()
    os.execv(exe, [exe] + sys.argv[1:])
