"""Safe fixes stay within the oldest torch the project requires (context.torch_floor)."""

from __future__ import annotations

import pytest

from cuda2rocm.context.torch_floor import torch_floor
from tests.conftest import lint_json, run_cli


def test_the_floor_is_the_oldest_lower_bound_stated():
    files = [b"torch>=2.2.0\nnumpy", b'dependencies = ["torch~=2.5", "torchvision"]', b"torch"]
    assert torch_floor(files) == (2, 2, 0)
    assert torch_floor([b"pytorch-lightning>=2.0\ntorch\n", b"torchaudio>=2.4"]) is None


AMP = """\
import torch
from torch.cuda.amp import custom_fwd


class Op(torch.autograd.Function):
    @staticmethod
    @custom_fwd
    def forward(ctx, x):
        return x * 2


def step(model, x):
    with torch.cuda.amp.autocast():
        return model(x)
"""


@pytest.mark.parametrize(
    ("floor", "custom_fwd_safe"), [("torch>=2.1,<3", False), ("torch >= 2.5", True), ("", True)]
)
def test_a_safe_fix_needing_a_newer_torch_than_the_project_allows_is_unsafe(
    tmp_path, floor, custom_fwd_safe
):
    # torch.amp.custom_fwd first exists in torch 2.4, torch.amp.autocast in 1.10: a project
    # that still allows torch 2.1 would break on it, so that fix is no longer offered as safe.
    (tmp_path / "ops.py").write_text(AMP)
    (tmp_path / "requirements.txt").write_text(floor + "\nnumpy\n")
    run_cli("fix", "--exit-zero", str(tmp_path))
    fixed = (tmp_path / "ops.py").read_text()
    assert 'torch.amp.autocast("cuda")' in fixed  # 1.10: within every floor here
    assert ("from torch.amp import custom_fwd" in fixed) is custom_fwd_safe
    (tmp_path / "ops.py").write_text(AMP)
    found = lint_json(tmp_path)
    why = [d["message"] for d in found if "custom_fwd" in d["message"]]
    assert why and all(("allows torch 2.1" in m) is not custom_fwd_safe for m in why)
