"""The progress display names the run's phases, so a long derivation never looks hung."""

from __future__ import annotations

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import Linter


class _Recorder:
    def __init__(self) -> None:
        self.events: list[object] = []

    def __call__(self, done: int, total: int) -> None:
        self.events.append((done, total))

    def phase(self, name: str) -> None:
        self.events.append(name)


def test_phases_come_in_order_before_the_counts(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text('import torch\nx = torch.zeros(1, device="hip")\n')
    (tmp_path / "b.cu").write_text("#define WARP_SIZE 32\n")
    seen = _Recorder()
    result = runner.run(Linter(list(load_catalogue())), [str(tmp_path)], progress=seen)
    assert result.diagnostics
    phases = [e for e in seen.events if isinstance(e, str)]
    assert phases == ["reading files", "project facts", "linting files"]
    first_count = next(i for i, e in enumerate(seen.events) if isinstance(e, tuple))
    assert first_count > seen.events.index("linting files")
    # A plain callback (no `phase`) still gets the counts.
    counts: list[tuple[int, int]] = []
    runner.run(
        Linter(list(load_catalogue())), [str(tmp_path)], progress=lambda d, t: counts.append((d, t))
    )
    assert counts and counts[-1][0] == counts[-1][1]
