"""The fast pass against the full pass on real trees: both must report exactly the same.

    python bench/fast_pass_check.py /path/to/diffusers /path/to/flash-attention

Lints each tree twice in this process, one core, no cache: once as shipped, once with the fast
pass off (LibCST parses and walks every Python file whole), and compares every field of every
finding, guarded ones included. Prints the differences and exits 1 when there are any. The
tests do the same over every rule example and a generated tree (tests/test_fast_pass.py); this
is the check on code nobody wrote for the tool. Trees are fetched at measurement time, never
committed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cuda2rocm.cli import main as cli  # noqa: E402
from cuda2rocm.frontends import python  # noqa: E402


def _lint(tree: Path, fast: bool) -> tuple[list[str], float]:
    python.FAST_PASS = fast
    start = time.perf_counter()
    result = CliRunner().invoke(
        cli, ["lint", str(tree), "-j1", "--no-cache", "--format", "json", "--show-guarded"]
    )
    took = time.perf_counter() - start
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    data = json.loads(result.stdout)
    rows = sorted(json.dumps(d, sort_keys=True) for d in data["diagnostics"])
    return rows, took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    args = parser.parse_args()
    failed = False
    for tree in args.trees:
        fast, fast_s = _lint(tree, True)
        full, full_s = _lint(tree, False)
        same = fast == full
        failed |= not same
        print(
            f"{tree.name}: {len(fast)} findings, fast pass {fast_s:.1f} s, full pass "
            f"{full_s:.1f} s: {'identical' if same else 'DIFFERENT'}"
        )
        for row in sorted(set(full) - set(fast))[:20]:
            print(f"  only full: {row}")
        for row in sorted(set(fast) - set(full))[:20]:
            print(f"  only fast: {row}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
