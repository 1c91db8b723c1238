"""cuda-home-gate in a decision that accepts ROCm in another branch: CUDA_HOME is None on ROCm
builds of torch (torch/utils/cpp_extension.py, `CUDA_HOME = _find_cuda_home() if
(torch.cuda._is_compiled() and torch.version.cuda) else None`), so such a test sends ROCm down
the other branches; when one of them takes ROCm, the test is no gate that excludes it."""

import pytest

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import Linter
from cuda2rocm.sources import SourceFile

HEAD = (
    "import torch\nfrom setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, IS_HIP_EXTENSION, CUDAExtension\n"
)
TAIL = 'setup(name="a", ext_modules=[CUDAExtension("a", ["a.cu"], extra_compile_args=flags)])\n'


def _gates(body: str) -> list[int]:
    specs = [r for r in load_catalogue() if r.id == "cuda-home-gate"]
    found = Linter(specs).lint_source(SourceFile("setup.py", "python", HEAD + body + TAIL))
    return [d.position.line - 3 for d in found]  # lines of `body`


ACCEPTED = {
    "elif ROCM_HOME": (
        'if CUDA_HOME is not None:\n    flags = ["-DC"]\nelif ROCM_HOME is not None:\n'
        '    flags = ["-DR"]\nelse:\n    raise RuntimeError("no toolkit")\n'
    ),
    "elif torch.version.hip": (
        'if CUDA_HOME:\n    flags = ["-DC"]\nelif torch.version.hip:\n    flags = ["-DR"]\n'
        'else:\n    raise RuntimeError("no toolkit")\n'
    ),
    "else: if IS_HIP_EXTENSION": (
        'flags = []\nif not CUDA_HOME:\n    if IS_HIP_EXTENSION:\n        flags = ["-DR"]\n'
        '    else:\n        raise RuntimeError("no toolkit")\n'
    ),
    "ROCm arm first": (
        'if IS_HIP_EXTENSION:\n    flags = ["-DR"]\nelif CUDA_HOME is not None:\n'
        '    flags = ["-DC"]\nelse:\n    raise RuntimeError("no toolkit")\n'
    ),
    "nested": (
        "flags = []\nif torch.cuda.is_available():\n    if CUDA_HOME is not None:\n"
        '        flags = ["-DC"]\n    elif torch.version.hip is not None:\n'
        '        flags = ["-DR"]\n'
    ),
    "helper variable": (
        "use_rocm = ROCM_HOME is not None\nflags = []\nif CUDA_HOME is not None:\n"
        '    flags = ["-DC"]\nelif use_rocm:\n    flags = ["-DR"]\n'
    ),
    "a helper named for ROCm": (
        'flags = []\nif CUDA_HOME is not None:\n    flags = ["-DC"]\nelif is_rocm_build():\n'
        '    flags = ["-DR"]\n'
    ),
    "conditional expression": (
        'flags = ["-DC"] if CUDA_HOME is not None else (["-DR"] if ROCM_HOME is not None else [])\n'
    ),
    "neither toolkit": (
        'flags = []\nif CUDA_HOME is None and ROCM_HOME is None:\n    raise RuntimeError("none")\n'
    ),
}


@pytest.mark.parametrize("body", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_a_decision_that_takes_rocm_elsewhere_is_no_gate(body):
    assert _gates(body) == []


GATES = {
    "else only": (
        'if CUDA_HOME is not None:\n    flags = ["-DC"]\nelse:\n    flags = []\n',
        [1],
    ),
    "an arm ROCm does not take": (
        'flags = []\nif CUDA_HOME is not None:\n    flags = ["-DC"]\nelif ROCM_HOME is None:\n'
        '    print("none")\n',
        [2],
    ),
    "an arm of unknown value": (
        'flags = []\nif CUDA_HOME is not None:\n    flags = ["-DC"]\n'
        'elif torch.cuda.is_available():\n    flags = ["-DR"]\n',
        [2],
    ),
    "a separate if": (
        'flags = []\nif CUDA_HOME is not None:\n    flags = ["-DC"]\nif ROCM_HOME is not None:\n'
        '    flags = ["-DR"]\n',
        [2],
    ),
    "a raise the ROCm arm does not avoid": (
        "flags = []\nif CUDA_HOME is None:\n    print(IS_HIP_EXTENSION)\n"
        '    raise RuntimeError("x")\n',
        [2],
    ),
}


@pytest.mark.parametrize(("body", "lines"), GATES.values(), ids=GATES.keys())
def test_a_gate_no_branch_of_which_takes_rocm_is_reported(body, lines):
    assert _gates(body) == lines
