"""Shared fixtures: the repository root, and the `anvil` program the tests compare with
($ANVIL_CLI, else build/anvil or build-cpu/anvil of the repository)."""
import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def cli():
    cands = [os.environ.get("ANVIL_CLI"), ROOT / "build" / "anvil", ROOT / "build-cpu" / "anvil",
             shutil.which("anvil")]
    for c in cands:
        if c and pathlib.Path(c).is_file() and os.access(c, os.X_OK):
            return str(c)
    pytest.fail("the anvil program is needed to compare with: build it (scripts/setup) or "
                "set ANVIL_CLI")
