"""Optional extras named for CUDA beside extras named for ROCm (context.vendor_extras)."""

from __future__ import annotations

import pytest

from cuda2rocm.context.vendor_extras import cuda_extra_lines, vendor_of
from tests.conftest import lint_json

PYPROJECT = """\
[project]
name = "demo"
dependencies = ["numpy", "xformers>=0.0.28"]

[project.optional-dependencies]
gpu-cu124 = [
    "xformers==0.0.28.post3",
    "flash-attn>=2.6",
]
"nvidia_extra" = ["flash-attn==2.7.0"]
radeon-rocm63 = [
    "flash-attn>=2.6",
]
docs = ["mkdocs"]
"""


@pytest.mark.parametrize(
    ("name", "vendor"),
    [
        ("gpu-cu124", "cuda"),
        ("cu118onlytorch211", "cuda"),
        ("cuda12", "cuda"),
        ("nvidia_extra", "cuda"),
        ("radeon-rocm63", "rocm"),
        ("amd", "rocm"),
        ("hip", "rocm"),
        ("docs", ""),
        ("cupy", ""),  # a package, not CUDA's tag
        ("cu-rocm", ""),  # both: unknown
    ],
)
def test_extra_names_are_read_word_by_word(name, vendor):
    assert vendor_of(name) == vendor


def test_findings_in_cuda_extras_are_guarded_only_beside_a_rocm_extra(tmp_path):
    lines = cuda_extra_lines(PYPROJECT)
    assert sorted(lines) == [6, 7, 8, 9, 10]
    assert "`radeon-rocm63`" in lines[7]
    assert cuda_extra_lines(PYPROJECT.replace("radeon-rocm63", "radeon")) == {}
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    found = [d for d in lint_json(tmp_path) if d["path"].endswith("pyproject.toml")]
    shown = sorted(d["line"] for d in found if "guarded" not in d)
    guarded = sorted(d["line"] for d in found if "guarded" in d)
    assert 3 in shown and 12 in shown  # the base dependencies and the ROCm extra stay reported
    assert guarded and set(guarded) <= {7, 8, 10}
