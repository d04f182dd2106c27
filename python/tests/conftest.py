import os
import pathlib

import pytest

# The checkout (templates/, examples/data/); KTUNE_SOURCE_ROOT where the tests were copied elsewhere.
ROOT = pathlib.Path(os.environ.get("KTUNE_SOURCE_ROOT") or pathlib.Path(__file__).resolve().parents[2])


def _gpu_present() -> bool:
    import ktune

    status, _ = ktune.cli("devices", capture=True)
    return status == 0


def pytest_collection_modifyitems(config, items):
    if any("gpu" in item.keywords for item in items) and not _gpu_present():
        skip = pytest.mark.skip(reason="no CUDA driver or GPU here (`ktune devices` found none)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    path = str(tmp_path / "ktune.db")
    monkeypatch.setenv("KTUNE_DB", path)
    monkeypatch.setenv("KTUNE_CACHE_DIR", str(tmp_path / "cubins"))
    return path
