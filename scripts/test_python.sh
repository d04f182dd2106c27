#!/bin/sh
# Installs the Python package from this checkout into a virtual environment
# (build-py/venv; its build folder build-py/<wheel tag> is kept, so a second
# run rebuilds only what changed) and runs its pytest suite. Tests marked
# `gpu` skip without a GPU. Extra arguments go to pytest.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x build-py/venv/bin/python ] || "$PY" -m venv build-py/venv
build-py/venv/bin/python -m pip install -q --upgrade pip
build-py/venv/bin/python -m pip install -q ".[test]"
exec build-py/venv/bin/python -m pytest -q python/tests "$@"
