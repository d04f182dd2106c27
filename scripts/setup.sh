#!/bin/sh
# Installs the Debian packages ktune builds with. Safe to run twice: apt-get
# skips what is installed, and nothing is fetched when everything is present.
# `--fuzz` also installs what fuzz/run.sh needs: clang and libFuzzer's runtime
# (the sanitizer build of scripts/test_sanitized.sh needs nothing more: g++
# brings its sanitizers). Open MPI (libopenmpi-dev, openmpi-bin) builds the MPI run
# (tuner/mpi/) and runs its test; ktune builds without it too.
set -eu
PKGS="cmake ninja-build g++ libyaml-cpp-dev libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libopenmpi-dev openmpi-bin"
for arg in "$@"; do
  case $arg in
    --fuzz) PKGS="$PKGS clang libclang-rt-14-dev" ;;
    *) echo "setup: unknown option '$arg' (--fuzz)" >&2; exit 2 ;;
  esac
done
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
# Optional: headless Chromium renders `ktune report`'s page in its test
# (tests/report_test.cpp skips without it). About 25 packages without the
# recommended ones; a failure here is reported and setup goes on.
if [ "${KTUNE_SETUP_NO_CHROMIUM:-0}" != 1 ] && ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing chromium (optional: the report's rendering test; KTUNE_SETUP_NO_CHROMIUM=1 skips it)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium; } ||
    echo "setup: chromium could not be installed; the report's rendering test will skip" >&2
fi
# The Python package (scripts/test_python.sh) needs python3 >= 3.9 with venv,
# pip and its headers; its build requirements come from the Python registry.
if ! python3 -c 'import sys, sysconfig, venv, ensurepip, os; sys.exit(sys.version_info < (3, 9) or not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing python3 with venv and headers"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv python3-dev python3-pip
fi
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || {
  echo "setup: the CUDA toolkit (13.x) is required in /usr/local/cuda; it is not a Debian package" >&2; exit 1; }
echo "setup: all build dependencies present"
