"""Shared fixtures: the repository's model files and the `ubapp` command line to check against."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def _cli() -> str:
    exe = os.environ.get("UBAPP_BIN") or shutil.which("ubapp") or str(ROOT / "target" / "release" / "ubapp")
    if not Path(exe).exists():
        pytest.fail(f"the ubapp command line is needed to cross-check the package: build it (cargo build --release) or set UBAPP_BIN (looked for {exe})")
    return exe


@pytest.fixture(scope="session")
def cli():
    """Run the command line; returns (exit code, stdout, stderr)."""
    exe = _cli()

    def run(*args):
        p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    """Run the command line with --json and parse its stdout (fails on a non-zero exit)."""

    def run(*args):
        code, out, err = cli(*args, "--json")
        assert code == 0, err
        return json.loads(out)

    return run


@pytest.fixture(scope="session")
def models():
    return MODELS
