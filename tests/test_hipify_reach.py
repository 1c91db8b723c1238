"""torch's own `hipify()` is the oracle for `context.hipify_reach`: on a fixture tree, the files
the model says a cpp_extension build hipifies are exactly those torch 2.13's hipify processes
(rewrites, or reads and leaves unchanged), and those it finds but leaves alone ("ignored") are
among the model's `ignored`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cuda2rocm.context.hipify_reach import load_call, reach, setup_call

CUDA = "#include <cuda_runtime.h>\ninline cudaStream_t pick_{n}() {{ return nullptr; }}\n"

TREE = {
    # the sources
    "kern/ops.cu": (
        '#include "local.cuh"\n'
        '#include "shared/util.h"\n'
        "#include <deep/geo.hpp>\n"
        '#include "../common/types.cuh"\n'
        '#include "missing.h"\n'
        '#include "outer.h"\n'
        '#include  "twospace.h"\n'
        '#include "ATen/cuda/CUDAContext.h"\n'
        '#include "gen.h"\n'
        '#include "../build/stale.h"\n'
        "#include <lib.h>\n"
        '#include "dup.h"\n'
        '#include "impl.inl"\n'
        '#include "link/s.h"\n'
        "#if 0\n"
        '#include "dead.cuh"\n'
        "#endif\n"
        "__global__ void k(float* x) { x[0] = 1; }\n"
    ),
    "kern/second.cpp": '#include "local.cuh"\nint second() { return 2; }\n',
    # beside the source, and what it includes beside itself
    "kern/local.cuh": '#include "nested.h"\n' + CUDA.format(n=1),
    "kern/nested.h": CUDA.format(n=2),
    "kern/twospace.h": CUDA.format(n=3),
    "kern/impl.inl": CUDA.format(n=4),
    "kern/dead.cuh": CUDA.format(n=5),
    "kern/unreached.cuh": CUDA.format(n=6),
    # through include dirs
    "api/shared/util.h": CUDA.format(n=7),
    "api/deep/geo.hpp": '#include "geo_impl.h"\n' + CUDA.format(n=8),
    "api/deep/geo_impl.h": CUDA.format(n=9),
    "common/types.cuh": CUDA.format(n=10),
    # top-level build/ and third_party/: walked only through an include dir
    "build/gen/gen.h": CUDA.format(n=11),
    "build/stale.h": CUDA.format(n=12),
    "third_party/lib/include/lib.h": '#include "../src/priv.h"\n' + CUDA.format(n=13),
    "third_party/lib/src/priv.h": CUDA.format(n=14),
    # two include dirs hold dup.h: the last one listed wins
    "dirA/dup.h": CUDA.format(n=15),
    "dirB/dup.h": CUDA.format(n=16),
    "linked/s.h": CUDA.format(n=17),
}
INCLUDE_DIRS = ["api", "build/gen", "third_party/lib/include", "dirA", "dirB"]


def _tree(root: Path) -> Path:
    build = root / "proj"
    for name, text in TREE.items():
        path = build / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (build / "kern" / "link").symlink_to(build / "linked", target_is_directory=True)
    outside = root / "elsewhere"
    outside.mkdir()
    (outside / "outer.h").write_text(CUDA.format(n=18))
    return build


def _torch(**kwargs) -> tuple[set[str], set[str]]:
    """torch's hipify, run as cpp_extension runs it: (processed, ignored)."""
    hipify_python = pytest.importorskip("torch.utils.hipify.hipify_python")
    hipify_python.HIPIFY_FINAL_RESULT.clear()  # a module-level record shared by all calls
    result = hipify_python.hipify(show_detailed=False, show_progress=False, **kwargs)
    done = {p for p, r in result.items() if "ignored" not in r.status}
    ignored = {p for p, r in result.items() if "ignored" in r.status}
    hipify_python.HIPIFY_FINAL_RESULT.clear()
    return done, ignored


def _rel(paths, base: Path) -> set[str]:
    return {os.path.relpath(p, base) for p in paths}


def test_cuda_extension_reach_matches_torch(tmp_path):
    build = _tree(tmp_path)
    dirs = [*INCLUDE_DIRS, str(tmp_path / "elsewhere")]
    sources = ["kern/ops.cu", "kern/second.cpp"]
    model = reach(setup_call(str(build), sources, dirs))
    # As torch 2.13's CUDAExtension calls it on ROCm (build_dir = the setup.py folder).
    done, ignored = _torch(
        project_directory=str(build),
        output_directory=str(build),
        header_include_dirs=dirs,
        includes=[os.path.join(str(build), "*")],
        extra_files=[str(build / s) for s in sources],
        is_pytorch_extension=True,
        hipify_extra_files_only=True,
    )
    assert _rel(model.hipified, build) == _rel(done, build)
    assert _rel(ignored, build) <= _rel(model.ignored, build)
    # what the walk reaches, spelled out (so a change in torch shows here too)
    assert _rel(model.hipified, build) == {
        "kern/ops.cu",
        "kern/second.cpp",
        "kern/local.cuh",
        "kern/nested.h",
        "api/shared/util.h",
        "api/deep/geo.hpp",
        "api/deep/geo_impl.h",
        "common/types.cuh",
        "build/gen/gen.h",
        "third_party/lib/include/lib.h",
        "dirB/dup.h",
        "kern/dead.cuh",
    }
    left = _rel(model.ignored, build)
    assert {"kern/impl.inl", "build/stale.h", "third_party/lib/src/priv.h"} <= left
    assert {"kern/link/s.h", "../elsewhere/outer.h"} <= left
    assert not {"kern/unreached.cuh", "kern/twospace.h", "dirA/dup.h"} & (
        _rel(model.hipified, build) | left
    )


def test_without_include_dirs_only_relative_includes_reach(tmp_path):
    build = _tree(tmp_path)
    model = reach(setup_call(str(build), ["kern/ops.cu"], []))
    done, _ = _torch(
        project_directory=str(build),
        output_directory=str(build),
        includes=[os.path.join(str(build), "*")],
        extra_files=[str(build / "kern/ops.cu")],
        is_pytorch_extension=True,
        hipify_extra_files_only=True,
    )
    assert _rel(model.hipified, build) == _rel(done, build)
    assert "api/shared/util.h" not in _rel(model.hipified, build)
    assert "common/types.cuh" in _rel(model.hipified, build)


def test_load_reach_matches_torch(tmp_path):
    build = _tree(tmp_path)
    cache = tmp_path / "torch_extensions" / "ops"
    cache.mkdir(parents=True)
    paths = [str(build / "api"), str(build / "dirA")]
    model = reach(load_call(str(build), ["kern/ops.cu"], paths))
    # As torch 2.13's _jit_compile calls it (ROCM_HOME / torch's own folders ignored).
    done, ignored = _torch(
        project_directory=str(cache),
        output_directory=str(cache),
        header_include_dirs=paths,
        extra_files=[str(build / "kern/ops.cu")],
        ignores=[os.path.join(str(tmp_path / "rocm"), "*")],
        is_pytorch_extension=True,
    )
    assert _rel(model.hipified, build) == _rel(done, build)
    assert _rel(ignored, build) <= _rel(model.ignored, build)
    # every header under the include paths, reached or not; nothing beside the source
    assert "dirA/dup.h" in _rel(model.hipified, build)
    assert "kern/local.cuh" in _rel(model.ignored, build)


def test_a_source_outside_the_build_folder_hipifies_alone(tmp_path):
    build = _tree(tmp_path)
    shutil.copy(build / "kern/ops.cu", tmp_path / "elsewhere" / "far.cu")
    (tmp_path / "elsewhere" / "local.cuh").write_text(CUDA.format(n=19))
    model = reach(setup_call(str(build), ["../elsewhere/far.cu"], ["api"]))
    done, _ = _torch(
        project_directory=str(build),
        output_directory=str(build),
        header_include_dirs=["api"],
        includes=[os.path.join(str(build), "*")],
        extra_files=[str(tmp_path / "elsewhere" / "far.cu")],
        is_pytorch_extension=True,
        hipify_extra_files_only=True,
    )
    assert _rel(model.hipified, build) == _rel(done, build)
    assert "../elsewhere/local.cuh" in _rel(model.ignored, build)
    assert "api/shared/util.h" in _rel(model.hipified, build)
