from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_cli(*args: str, cwd: Path | None = None, input: str | None = None):
    """Run the installed command line in a subprocess, as a user would."""
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "cuda2rocm", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        input=input,
        timeout=300,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def write(tmp_path):
    """write("a/b.py", text) -> Path, creating directories."""

    def _write(name: str, text: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_bytes(text.encode("utf-8"))
        return path

    return _write
