"""`include_dirs=` of CUDAExtension and `extra_include_paths=` of load() are hipify's
header_include_dirs: a header a torch-built source reaches through them is hipified (no
finding asks to rename it), one the walk finds but leaves alone is reported as "not hipified
by torch's cpp_extension", and a file a CMake build compiles is told nothing about
cpp_extension. Op-builder classes are read, and credited only on request."""

from __future__ import annotations

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context.extension_calls import extension_calls, project_reach
from cuda2rocm.engine import Linter

SOURCE = '#include <torch/extension.h>\n#include "kern/api.cuh"\nvoid run() {}\n'
HEADER = "#pragma once\n#include <cuda_runtime.h>\ninline cudaStream_t pick() { return 0; }\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _lint(root: Path, *rules: str):
    specs = [r for r in load_catalogue() if r.id in rules]
    return runner.run(Linter(specs), [root]).diagnostics


def _reported(root: Path, name: str) -> list[str]:
    return [
        d.message for d in _lint(root, "hip-include", "hip-stream") if Path(d.path).name == name
    ]


# -- reading the calls --------------------------------------------------------------------------
FORMS = """\
import os
from os import path
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, load

HERE = path.dirname(path.abspath(__file__))
common = [os.path.join(HERE, "third", "cutlite", "include")]
dirs = common + [path.join(HERE, "include"), "gen"]
ext = CUDAExtension("pkg._C", ["csrc/a.cu"], include_dirs=dirs + ["more"])
odd = CUDAExtension("pkg._D", ["csrc/b.cu"], include_dirs=[os.environ["INC"], "inc"])
jit = load("jit", [os.path.join(HERE, "csrc", "j.cu")], extra_include_paths=[HERE + "/jinc"])
cpu = load("cpu", ["csrc/c.cpp"], extra_include_paths=["cinc"])
"""


def test_include_dirs_are_read_through_names_joins_and_concatenation(tmp_path):
    _write(tmp_path, {"setup.py": FORMS})
    calls = {c.line: c for c in extension_calls(tmp_path / "setup.py", FORMS)}
    ext, odd, jit, cpu = calls[9], calls[10], calls[11], calls[12]
    assert ext.kind == "setup" and ext.sources == ("csrc/a.cu",)
    assert ext.include_dirs == ("third/cutlite/include", "include", "gen", "more")
    assert ext.complete
    # an element that cannot be read: the others still count, but the reach is not exact
    assert odd.include_dirs == ("inc",) and not odd.complete
    assert jit.kind == "load" and jit.include_dirs == ("./jinc",) and jit.complete
    # load() of C++ only (with_cuda defaults to "any .cu/.cuh source"): no hipify at all
    assert cpu.kind == "none" and cpu.hipify_call() is None


def test_forwarded_keyword_arguments_are_never_complete(tmp_path):
    text = "from torch.utils.cpp_extension import load\nload(**options)\n"
    (call,) = extension_calls(tmp_path / "jit.py", text)
    assert call.kind == "load" and not call.complete
    chosen = FORMS.replace(
        'CUDAExtension("pkg._C"', '(CUDAExtension if gpu else CppExtension)("pkg._C"'
    )
    calls = {c.line: c for c in extension_calls(tmp_path / "setup.py", chosen)}
    assert calls[9].kind == "setup" and not calls[9].complete  # either builder: not exact


# -- crediting what the walk reaches ------------------------------------------------------------
SETUP = """\
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
INCLUDES = [os.path.join(ROOT, "include")]
setup(
    name="pkg",
    ext_modules=[CUDAExtension("pkg._C", ["csrc/ops.cpp"], include_dirs=INCLUDES)],
    cmdclass={"build_ext": BuildExtension},
)
"""


def test_a_header_reached_through_include_dirs_is_hipified(tmp_path):
    _write(
        tmp_path,
        {
            "setup.py": SETUP,
            "csrc/ops.cpp": SOURCE,
            "include/kern/api.cuh": HEADER,
            "include/kern/spare.cuh": HEADER,  # in the folder, but no source includes it
        },
    )
    reached, left = project_reach([(tmp_path / "setup.py", SETUP.encode())])
    assert (tmp_path / "include/kern/api.cuh").resolve() in reached
    assert (tmp_path / "include/kern/spare.cuh").resolve() not in reached
    assert not left
    assert _reported(tmp_path, "api.cuh") == []
    # not reached: still a port to do, with the wording of "nothing known"
    spare = _reported(tmp_path, "spare.cuh")
    assert spare and all("not built by torch's cpp_extension" in m for m in spare)


def test_without_the_include_dir_the_header_stays_reported(tmp_path):
    _write(
        tmp_path,
        {
            "setup.py": SETUP.replace("include_dirs=INCLUDES", "include_dirs=[]"),
            "csrc/ops.cpp": SOURCE,
            "include/kern/api.cuh": HEADER,
        },
    )
    assert _reported(tmp_path, "api.cuh")


def test_a_header_outside_the_setup_folder_is_known_not_hipified(tmp_path):
    setup = SETUP.replace('os.path.join(ROOT, "include")', 'os.path.join(ROOT, "..", "shared")')
    _write(
        tmp_path,
        {
            "pkg/setup.py": setup,
            "pkg/csrc/ops.cpp": SOURCE,
            "shared/kern/api.cuh": HEADER,  # found through include_dirs, outside build_dir/*
        },
    )
    reached, left = project_reach([(tmp_path / "pkg/setup.py", setup.encode())])
    header = (tmp_path / "shared/kern/api.cuh").resolve()
    assert header in left and header not in reached
    messages = _reported(tmp_path, "api.cuh")
    assert messages
    assert all("not hipified by torch's cpp_extension" in m for m in messages)
    assert not any("not built by torch" in m for m in messages)


CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\n"
CMAKE += "add_library(k STATIC src/k.cu)\n"


def test_a_cmake_built_file_is_told_nothing_about_cpp_extension(tmp_path):
    _write(
        tmp_path,
        {
            "CMakeLists.txt": CMAKE,
            "src/k.cu": '#include "k.cuh"\n__global__ void k() {}\n',
            "src/k.cuh": HEADER,
            "loose/x.cuh": HEADER,  # no build names it
        },
    )
    for name in ("k.cuh",):
        messages = _reported(tmp_path, name)
        assert messages and all("CMake build" in m for m in messages), messages
        assert not any("cpp_extension" in m for m in messages)
    loose = _reported(tmp_path, "x.cuh")
    assert loose and all("not built by torch's cpp_extension" in m for m in loose)


BUILDER = """\
from .builder import CUDAOpBuilder


class ScaleBuilder(CUDAOpBuilder):
    NAME = "scale"

    def sources(self):
        return ["ops/csrc/scale/scale.cu"]

    def include_paths(self):
        return ["ops/csrc/includes"]
"""


def test_op_builders_are_read_but_not_credited_by_default(tmp_path):
    _write(
        tmp_path,
        {
            "op_builder/scale.py": BUILDER,
            "ops/csrc/scale/scale.cu": '#include "scale_api.h"\n__global__ void k() {}\n',
            "ops/csrc/includes/scale_api.h": HEADER,
        },
    )
    path = tmp_path / "op_builder/scale.py"
    (call,) = extension_calls(path, BUILDER, op_builders=True)
    assert call.kind == "op-builder" and call.include_dirs == ("ops/csrc/includes",)
    assert extension_calls(path, BUILDER) == []
    reached, _ = project_reach([(path, BUILDER.encode())])
    assert not reached
    assert _reported(tmp_path, "scale_api.h")  # still a port to do
