"""`cuda2rocm fix` on C++/CUDA from the command line: targets, the compatibility header, --diff."""

from __future__ import annotations

import shutil

from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "cuda"


def _copy(tmp_path):
    target = tmp_path / "kernels"
    shutil.copytree(FIXTURES, target, ignore=shutil.ignore_patterns("broken"))
    return target


def test_portable_fix_writes_one_header_and_is_idempotent(cli, tmp_path):
    tree = _copy(tmp_path)
    first = cli("fix", "--unsafe", str(tree))
    assert first.returncode in (0, 1), first.stderr  # 1: findings without a fix remain
    header = tree / "cuda2rocm_compat.h"
    assert header.is_file() and "compatibility header" in first.stderr
    text = header.read_text()
    assert "#if CUDA2ROCM_HIP" in text and "cuda2rocm-names:" in text
    stream = (tree / "stream_event.cu").read_text()
    assert '#include "cuda2rocm_compat.h"' in stream and "cudaStream_t" in stream
    mtime = header.stat().st_mtime_ns
    second = cli("fix", "--unsafe", str(tree))
    assert "Fixed 0 findings in 0 files" in second.stdout
    assert header.stat().st_mtime_ns == mtime


def test_hip_target_renames_to_hip_spelling(cli, tmp_path):
    tree = _copy(tmp_path)
    assert cli("fix", "--unsafe", "--target", "hip", "--exit-zero", str(tree)).returncode == 0
    stream = (tree / "stream_event.cu").read_text()
    assert "hipStream_t" in stream and "cudaStream_t" not in stream.split("//")[0]


def test_diff_shows_the_header_and_writes_nothing(cli, tmp_path):
    tree = _copy(tmp_path)
    before = {p.name: p.read_bytes() for p in tree.iterdir()}
    result = cli("fix", "--unsafe", "--diff", str(tree))
    assert result.returncode == 1
    assert "+++ b/" in result.stdout and "cuda2rocm_compat.h" in result.stdout
    assert {p.name: p.read_bytes() for p in tree.iterdir()} == before


def test_target_from_config(cli, tmp_path):
    tree = _copy(tmp_path)
    (tree / "cuda2rocm.toml").write_text('target = "hip"\nunsafe-fixes = true\n')
    assert cli("fix", "--exit-zero", str(tree)).returncode == 0
    assert "hipStream_t" in (tree / "stream_event.cu").read_text()


def test_a_stray_header_outside_the_source_tree_is_not_reused(cli, tmp_path):
    """No repository around the project: a compatibility header in a folder that only collects
    checkouts (no sources of its own) is not this project's; the fix writes its own."""
    (tmp_path / "cuda2rocm_compat.h").write_text("// left over from another run\n")
    tree = _copy(tmp_path)
    cli("fix", "--unsafe", "--exit-zero", str(tree))
    assert (tree / "cuda2rocm_compat.h").is_file()
    stream = (tree / "stream_event.cu").read_text()
    assert '#include "cuda2rocm_compat.h"' in stream and "../cuda2rocm_compat.h" not in stream
