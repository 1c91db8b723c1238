"""Project wrappers of torch's builders (context.builder_wrappers): a call of a function or
class that hands its argument to `load(sources=...)` / `extra_include_paths=` is a builder
call, so the files it names are torch-built; what cannot be read, and a project function that
only shares a builder's name, credit nothing."""

from __future__ import annotations

from pathlib import Path

from conftest import lint_json

from cuda2rocm.context.builder_wrappers import Run, project_wrapped_calls, summarize

KERNEL = "#include <cuda_runtime.h>\nvoid {n}(cudaStream_t s) {{ cudaStreamSynchronize(s); }}\n"

HELPERS = """from torch.utils.cpp_extension import load as jit_load


def compile_kernels(tag, files, **options):
    return jit_load(name=tag, sources=[str(f) for f in files], **options)


class KernelModule:
    def __init__(self, tag, kernel_files, headers=()):
        self.tag = tag
        self.kernel_files = kernel_files
        self.headers = headers

    def _listed(self, value):
        got = value() if callable(value) else value
        return [str(v) for v in got]

    def build(self):
        opts = {"name": self.tag, "sources": self._listed(self.kernel_files)}
        if self.headers:
            opts["extra_include_paths"] = list(self.headers)
        return jit_load(**opts)
"""

FIRST_USER = """import os
from proj.helpers.jit import compile_kernels

KDIR = os.path.join(os.path.dirname(__file__), "..", "csrc")
compile_kernels("ring", [os.path.join(KDIR, "ring", "ring.cu")])
"""

SECOND_USER = """from pathlib import Path
from ..helpers import jit as jh

HERE = Path(__file__).parent
jh.compile_kernels(tag="fan", files=[HERE / "fan_kernel.cu"], verbose=True)


def _tile_dir():
    return Path(__file__).resolve().parents[1] / "csrc" / "tile"


TILE = jh.KernelModule(
    "tile",
    kernel_files=lambda: [str(_tile_dir() / f"tile_{k}.cu") for k in ["fwd"]],
    headers=[str(_tile_dir() / "include")],
)
"""

FORWARDING = """from proj.helpers.jit import compile_kernels


def quick_build(tag, **extra):
    return compile_kernels(tag, **extra)


def layered(tag, kernel_list):
    return quick_build(tag, files=kernel_list)
"""

FORWARD_USER = """import proj.ops.forwarding as fw

fw.quick_build("spin", files=["../csrc/spin/spin.cu"])
fw.layered("wave", ["../csrc/wave/wave.cu"])
fw.layered("lost", discover_kernels())
"""

LOOKALIKE = """def load(name, sources):
    return [open(s).read() for s in sources]


def pack(files):
    return load("pack", files)
"""

LOOKALIKE_USER = """from proj.tools.bundle import load, pack

load("bundle", ["../csrc/bundle/bundle.cu"])
pack(["../csrc/pack/pack.cu"])
"""


def _tree(write) -> None:
    files = {
        "proj/__init__.py": "",
        "proj/helpers/__init__.py": "",
        "proj/helpers/jit.py": HELPERS,
        "proj/ops/__init__.py": "",
        "proj/ops/first.py": FIRST_USER,
        "proj/ops/second.py": SECOND_USER,
        "proj/ops/forwarding.py": FORWARDING,
        "proj/ops/forward_user.py": FORWARD_USER,
        "proj/tools/__init__.py": "",
        "proj/tools/bundle.py": LOOKALIKE,
        "proj/tools/bundle_user.py": LOOKALIKE_USER,
        "proj/ops/fan_kernel.cu": KERNEL.format(n="fan"),
        "proj/csrc/ring/ring.cu": KERNEL.format(n="ring"),
        "proj/csrc/tile/tile_fwd.cu": '#include "tile.cuh"\n' + KERNEL.format(n="tile"),
        "proj/csrc/tile/include/tile.cuh": KERNEL.format(n="tile_h"),
        "proj/csrc/spin/spin.cu": KERNEL.format(n="spin"),
        "proj/csrc/wave/wave.cu": KERNEL.format(n="wave"),
        "proj/csrc/lost/lost.cu": KERNEL.format(n="lost"),
        "proj/csrc/bundle/bundle.cu": KERNEL.format(n="bundle"),
        "proj/csrc/pack/pack.cu": KERNEL.format(n="pack"),
    }
    for path, text in files.items():
        write(path, text)


def _lint(tmp_path):
    found = lint_json(tmp_path)
    return {Path(d["path"]).name: d for d in found if d["rule"] == "hip-stream"}


def test_wrapper_calls_credit_their_sources(cli, write, tmp_path):
    _tree(write)
    streams = _lint(tmp_path)
    # torch's hipify renames the stream API in what the wrappers' callers name: not reported
    for credited in ("ring.cu", "fan_kernel.cu", "tile_fwd.cu", "tile.cuh", "spin.cu", "wave.cu"):
        assert credited not in streams, credited
    # an argument that cannot be read, and a project `load` that is not torch's: reported,
    # with the wording for files torch's cpp_extension does not build
    for kept in ("lost.cu", "bundle.cu", "pack.cu"):
        assert kept in streams, kept
        assert "not built by torch's cpp_extension" in streams[kept]["message"]


def test_the_wrappers_found(write, tmp_path):
    _tree(write)
    files = [(p, p.read_bytes()) for p in sorted(tmp_path.rglob("*.py"))]
    run = Run({p: s for p, d in files if (s := summarize(d.decode())) is not None})
    names = {name: w for (_, name), w in run.wrappers.items()}
    assert set(names) == {"compile_kernels", "KernelModule", "quick_build", "layered"}
    assert names["KernelModule"].roles("kernel_files") == {("load", "sources")}
    assert names["KernelModule"].roles(2) == {("load", "include")}  # `headers`, by position
    assert names["quick_build"].roles("files") == {("load", "sources")}  # through **extra
    assert names["quick_build"].roles(0) == set()  # the name is no path
    calls = {c.line: c for c in project_wrapped_calls(files) if c.script.name == "second.py"}
    assert calls[5].sources == ("fan_kernel.cu",)
    assert calls[12].include_dirs == ("second.py/../../csrc/tile/include",)


def test_paths_derived_inside_the_wrapper_are_not_the_callers(write, tmp_path):
    """`join(root, "k.cu")` inside the wrapper: the caller passes a folder, not a source."""
    write(
        "w/build.py",
        "import os\nfrom torch.utils.cpp_extension import load\n"
        "def make(root):\n    return load('k', sources=[os.path.join(root, 'k.cu')])\n",
    )
    write("w/use.py", "from w.build import make\nmake('kern')\n")
    write("w/kern/k.cu", KERNEL.format(n="k"))
    files = [(p, p.read_bytes()) for p in sorted(tmp_path.rglob("*.py"))]
    assert project_wrapped_calls(files) == []


def test_a_dataclass_field_is_a_wrapper_parameter(write, tmp_path):
    write(
        "d/spec.py",
        "from dataclasses import dataclass, field\n"
        "from torch.utils import cpp_extension\n"
        "@dataclass\nclass Spec:\n    tag: str\n    files: list = field(default_factory=list)\n"
        "    def compile(self):\n"
        "        return cpp_extension.load(self.tag, [*self.files])\n",
    )
    write("d/use.py", "from d.spec import Spec\nSpec('v', ['kern/v.cu'])\n")
    files = [(p, p.read_bytes()) for p in sorted(tmp_path.rglob("*.py"))]
    (call,) = project_wrapped_calls(files)
    assert (call.builder, call.sources) == ("load", ("kern/v.cu",))
