"""The amp rewrite is behaviour-preserving: run old and rewritten code under real torch.

torch.cuda.amp.autocast(enabled, dtype, cache_enabled) and torch.amp.autocast(device_type,
dtype, enabled, cache_enabled) order their parameters differently; a rewrite that only inserted
"cuda" (as the FutureWarning suggests) would pass `enabled` as `dtype`. These tests build both
objects and compare their state.
"""

from __future__ import annotations

import itertools
import warnings

import pytest

from cuda2rocm.catalogue import find_rule
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.sources import SourceFile

torch = pytest.importorskip("torch")

LINTER = Linter([find_rule("amp-deprecated-api")])
VALUES = {"enabled": ["True", "False"], "dtype": ["torch.bfloat16"], "cache_enabled": ["False"]}


def _rewrite(code: str) -> str:
    source = SourceFile("t.py", "python", code)
    outcome = fix_source(source, LINTER.lint_source)
    assert outcome.refused is None
    assert outcome.fixed != code
    return outcome.fixed


def _run(code: str) -> dict:
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "<test>", "exec"), scope)
    return scope


def _autocast_state(obj) -> tuple:
    return (obj.device, obj.fast_dtype, obj._enabled, obj._cache_enabled)


def _autocast_calls():
    params = ["enabled", "dtype", "cache_enabled"]
    for n_positional in range(4):
        for chosen in itertools.product(*(VALUES[p] + [None] for p in params)):
            args = [v for v in chosen[:n_positional]]
            if None in args:
                continue
            rest = zip(params[n_positional:], chosen[n_positional:], strict=True)
            kwargs = [f"{p}={v}" for p, v in rest if v]
            yield ", ".join(args + kwargs)


@pytest.mark.parametrize("arguments", sorted(set(_autocast_calls())))
def test_autocast_rewrite_keeps_every_argument(arguments):
    code = f"import torch\nctx = torch.cuda.amp.autocast({arguments})\n"
    fixed = _rewrite(code)
    assert "torch.amp.autocast(" in fixed
    assert _autocast_state(_run(code)["ctx"]) == _autocast_state(_run(fixed)["ctx"])


@pytest.mark.parametrize(
    "arguments",
    ["", "1024.0", "2.0**10, 3.0", "init_scale=8.0, enabled=False", "4.0, growth_interval=7"],
)
def test_grad_scaler_rewrite_keeps_every_argument(arguments, monkeypatch):
    """Without a GPU the scaler disables itself, so record what its constructor was given."""
    import inspect

    from torch.amp.grad_scaler import GradScaler as Base

    original = Base.__init__
    seen = []

    def recording(self, *args, **kwargs):
        bound = inspect.signature(original).bind(self, *args, **kwargs)
        bound.apply_defaults()
        seen.append({k: v for k, v in bound.arguments.items() if k != "self"})
        original(self, *args, **kwargs)

    monkeypatch.setattr(Base, "__init__", recording)
    code = f"from torch.cuda.amp import GradScaler\nscaler = GradScaler({arguments})\n"
    fixed = _rewrite(code)
    assert "from torch.amp import GradScaler" in fixed
    _run(code)
    _run(fixed)
    assert len(seen) == 2 and seen[0] == seen[1]
    assert seen[1]["device"] == "cuda"


def test_custom_fwd_bwd_rewrite_runs_under_torch():
    code = """
import torch

class Double(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, g):
        return g * 2

x = torch.ones(3, requires_grad=True)
Double.apply(x).sum().backward()
result = x.grad.tolist()
"""
    fixed = _rewrite(code)
    assert 'device_type="cuda"' in fixed and "torch.cuda.amp" not in fixed
    assert _run(code)["result"] == _run(fixed)["result"] == [2.0, 2.0, 2.0]


def test_rewritten_code_emits_no_deprecation_warning():
    code = "import torch\nctx = torch.cuda.amp.autocast(False)\n"
    fixed = _rewrite(code)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(fixed, "<test>", "exec"), {})
    assert not [w for w in caught if issubclass(w.category, FutureWarning)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(code, "<test>", "exec"), {})
    assert [w for w in caught if issubclass(w.category, FutureWarning)]
