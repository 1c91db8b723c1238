"""Build context: C++ built by torch's cpp_extension is hipified there and needs no renames."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cuda2rocm.build_context import extension_sources

HEADER = (
    "#include <cuda_runtime.h>\ninline void sync(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
)
SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

SOURCES = ["csrc/ops.cpp", "csrc/kernel.cu"]
setup(name="x", ext_modules=[CUDAExtension("x_ops", sources=SOURCES)],
      cmdclass={"build_ext": BuildExtension})
"""


def _severities(cli, *paths, cwd=None):
    out = cli(
        "lint", "--no-cache", "--format", "json", "--select", "CR402", *map(str, paths), cwd=cwd
    ).stdout
    return sorted({d["severity"] for d in json.loads(out)["diagnostics"]})


def test_extension_sources_are_read_without_running_anything():
    text = (
        "import os\nfrom torch.utils.cpp_extension import load, CUDAExtension\n"
        'K = [os.path.join("src", "k.cu")]\n'
        'load("m", sources=K + ["src/a.cpp"])\n'
        'CUDAExtension("n", ["ext/b.cu"])\n'
    )
    assert sorted(extension_sources(text)) == ["ext/b.cu", "src/a.cpp", "src/k.cu"]


def test_headers_beside_extension_sources_are_torch_built(cli, write, tmp_path):
    write("setup.py", SETUP)
    write("csrc/util.cuh", HEADER)
    write("standalone/util.cuh", HEADER)
    assert _severities(cli, tmp_path / "csrc") == ["warning"]  # setup.py not in this run
    assert _severities(cli, tmp_path) == ["warning"]  # csrc/ is hipified by torch: no finding
    out = json.loads(
        cli("lint", "--no-cache", "--format", "json", "--select", "CR402", str(tmp_path)).stdout
    )
    by_path = {Path(d["path"]).parent.name: d["severity"] for d in out["diagnostics"]}
    assert by_path == {"standalone": "warning"}


def test_config_marks_sources_torch_built(cli, write, tmp_path):
    write("cuda2rocm.toml", 'torch-built = ["csrc/**"]\n')
    write("csrc/util.cuh", HEADER)
    write("other/util.cuh", HEADER)
    # torch hipifies csrc/ (nothing to do there); other/ needs the port.
    assert _severities(cli, tmp_path / "csrc" / "util.cuh", cwd=tmp_path) == []
    assert _severities(cli, tmp_path / "other" / "util.cuh", cwd=tmp_path) == ["warning"]


def test_fix_leaves_torch_built_headers_alone(cli, write, tmp_path):
    write("setup.py", SETUP)
    header = write("csrc/util.cuh", HEADER)
    assert cli("fix", "--unsafe", str(tmp_path)).returncode == 0
    assert header.read_text() == HEADER
    assert not (tmp_path / "csrc" / "cuda2rocm_compat.h").exists()


KERNEL = (
    "#include <cuda_runtime.h>\n#include <cublas_v2.h>\n"
    "__global__ void k(float* x) { x[blockIdx.x] = 0; }\n"
    "void run(cudaStream_t s, cublasHandle_t h) { cublasDestroy(h); k<<<1, 1, 0, s>>>(0); }\n"
)
HIPIFY_CMAKE = (
    "if(USE_ROCM)\n  include(Hipify)\n"
    "  hipify(CUDA_SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/gpu\n"
    "         HEADER_INCLUDE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/include)\nendif()\n"
)


def _rules_by_folder(cli, root):
    rules = "hip-stream,hip-include,vendor-blas-dnn"
    out = cli("lint", "--no-cache", "--format", "json", "--select", rules, str(root)).stdout
    found: dict[str, set[str]] = {}
    for d in json.loads(out)["diagnostics"]:
        folder = found.setdefault(Path(d["path"]).parent.name, set())
        folder |= {d["rule"]} | set(re.findall(r"`(cublas\w+)`", d["message"]))
    return found


def test_cmake_hipify_call_marks_its_source_dir_hipified(cli, write, tmp_path):
    write("CMakeLists.txt", HIPIFY_CMAKE)
    write("gpu/kernel.cu", KERNEL)
    write("other/kernel.cu", KERNEL)
    found = _rules_by_folder(cli, tmp_path)
    assert "gpu" not in found  # the build's hipify renames runtime and cuBLAS names there
    # cuBLAS names hipBLAS renames are hip-stream's (vendor-blas-dnn keeps the others)
    assert {"hip-stream", "hip-include", "cublasHandle_t", "cublasDestroy"} <= found["other"]


def test_hipify_perl_script_counts_only_when_the_build_runs_it(cli, write, tmp_path):
    script = '#!/bin/bash\nfor f in *.cu; do hipify-perl -inplace "$f"; done\n'
    write("gpu/hipify.sh", script)
    write("gpu/kernel.cu", KERNEL)
    write("CMakeLists.txt", "project(x)\n")
    assert "hip-stream" in _rules_by_folder(cli, tmp_path)["gpu"]  # nothing runs the script
    write(
        "CMakeLists.txt",
        "if(ENABLE_ROCM)\n"
        "  execute_process(COMMAND ${PROJECT_SOURCE_DIR}/gpu/hipify.sh)\nendif()\n",
    )
    assert "gpu" not in _rules_by_folder(cli, tmp_path)


def test_unresolved_hipify_dir_claims_nothing(tmp_path):
    from cuda2rocm.build_context import hipified_dirs

    cmake = tmp_path / "CMakeLists.txt"
    data = b"hipify(CUDA_SOURCE_DIR ${SOME_VAR}/src)\nhipify(CUDA_SOURCE_DIR csrc)\n"
    assert hipified_dirs([(cmake, "cmake", data)]) == {(tmp_path / "csrc").resolve()}


def test_hipify_dir_through_set_variables_and_project_dir(tmp_path):
    from cuda2rocm.build_context import hipified_dirs

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "CMakeLists.txt").write_text("project(t LANGUAGES CXX)\n")
    cmake = tmp_path / "tests" / "op" / "CMakeLists.txt"
    data = (
        b"set(src_dir ${PROJECT_SOURCE_DIR} )\nhipify(CUDA_SOURCE_DIR ${src_dir}\n"
        b"  HEADER_INCLUDE_DIR ${inc})\n"
        b'set(gpu "${CMAKE_CURRENT_SOURCE_DIR}/gpu")\nhipify(CUDA_SOURCE_DIR ${gpu})\n'
    )
    assert hipified_dirs([(cmake, "cmake", data)]) == {
        (tmp_path / "tests").resolve(),
        (tmp_path / "tests" / "op" / "gpu").resolve(),
    }


def test_hipify_dir_variable_with_two_values_or_a_list_claims_nothing(tmp_path):
    from cuda2rocm.build_context import hipified_dirs

    cmake = tmp_path / "CMakeLists.txt"
    data = (
        b"if(A)\n set(d a)\nelse()\n set(d b)\nendif()\nhipify(CUDA_SOURCE_DIR ${d})\n"
        b"set(l x y)\nhipify(CUDA_SOURCE_DIR ${l})\n"
        b"hipify(CUDA_SOURCE_DIR ${PROJECT_SOURCE_DIR}/src)\n"  # no project() above: unknown
    )
    assert hipified_dirs([(cmake, "cmake", data)]) == frozenset()


SCRIPT_WITH_TARGETS = """#!/bin/bash
function convert() {
    cd "$1" || exit
    while IFS= read -r -d '' f; do hipify-perl -inplace "$f"; done < <(find ./cuda -print0)
}
top=$(dirname "${BASH_SOURCE[0]}")/..
convert $top
top=$(dirname "${BASH_SOURCE[0]}")/../../bindings
convert "$top"
convert $UNSET_SOMEWHERE
"""


def test_hipify_script_function_targets_are_hipified(tmp_path):
    from cuda2rocm.build_context import hipified_dirs

    for folder in ("lib/cuda", "bindings/cuda", "bindings/other", "elsewhere/cuda"):
        (tmp_path / folder).mkdir(parents=True)
    script = tmp_path / "lib" / "cuda" / "hipify.sh"
    cmake = tmp_path / "CMakeLists.txt"
    files = [
        (script, "shell", SCRIPT_WITH_TARGETS.encode()),
        (cmake, "cmake", b"execute_process(COMMAND ${PROJECT_SOURCE_DIR}/lib/cuda/hipify.sh)\n"),
    ]
    # the script's folder, and the `cuda/` of each resolved target; `$UNSET_SOMEWHERE` is unknown
    assert hipified_dirs(files) == {
        (tmp_path / "lib" / "cuda").resolve(),
        (tmp_path / "bindings" / "cuda").resolve(),
    }
    assert hipified_dirs(files[:1]) == frozenset()  # the build never runs it


HIPIFY_HELPER = """
import os
from pathlib import Path


def run_hipify(root, src, extra):
    from torch.utils.hipify.hipify_python import hipify as do_hipify

    return do_hipify(project_directory=src, output_directory=src, includes=["*"])


def only_some(src):
    from torch.utils.hipify import hipify_python

    hipify_python.hipify(project_directory=src, includes=["kernels/*.cu"])
"""

BUILDER = """
from pathlib import Path
from .helpers import run_hipify, only_some

def make_ext(src_dir, other):
    src_dir = Path(src_dir)
    if is_rocm():
        run_hipify(Path(__file__).parent.parent, src_dir, [])
    only_some(src_dir)
    run_hipify(None, os.environ["SRC"], [])
"""

HIPIFY_SETUP = """
from pathlib import Path
from tools.builder import make_ext

here = Path(__file__).parent.resolve()
make_ext("pkg/ops/csrc", 1)
make_ext(here / "pkg" / "more", 2)
make_ext(other="x", src_dir=here / "pkg" / "kw")
make_ext(unknown_name, 3)
"""


def test_python_hipify_through_helpers_marks_each_call_site_folder(tmp_path):
    from cuda2rocm.context.python_hipify import python_hipified_dirs

    files = [
        (tmp_path / "tools" / "helpers.py", HIPIFY_HELPER.encode()),
        (tmp_path / "tools" / "builder.py", BUILDER.encode()),
        (tmp_path / "setup.py", HIPIFY_SETUP.encode()),
    ]
    # a literal, a Path expression, a keyword argument; `unknown_name`, the environment variable
    # and the hipify call restricted by `includes` claim nothing
    assert python_hipified_dirs(files) == {
        (tmp_path / "pkg" / "ops" / "csrc").resolve(),
        (tmp_path / "pkg" / "more").resolve(),
        (tmp_path / "pkg" / "kw").resolve(),
    }
    assert python_hipified_dirs(files[1:]) == frozenset()  # no hipify call in the run


def test_python_hipify_call_silences_renames_in_lint(cli, write, tmp_path):
    write("tools/__init__.py", "")
    write("tools/helpers.py", HIPIFY_HELPER)
    write("tools/builder.py", BUILDER)
    write("setup.py", HIPIFY_SETUP)
    write("pkg/ops/csrc/kernel.cu", KERNEL)
    write("pkg/other/kernel.cu", KERNEL)
    found = _rules_by_folder(cli, tmp_path)
    assert "csrc" not in found
    # cuBLAS names hipBLAS renames are hip-stream's (vendor-blas-dnn keeps the others)
    assert {"hip-stream", "hip-include", "cublasHandle_t", "cublasDestroy"} <= found["other"]


JIT_BUILD = """
import os
from types import SimpleNamespace
import torch.utils.cpp_extension as jit

HERE = os.path.dirname(os.path.abspath(__file__))


def params():
    srcs = [os.path.join(HERE, "ext.cpp"), os.path.join(HERE, "csrc", "k.cu")]
    return SimpleNamespace(sources=srcs, include=os.path.join(HERE, "..", "shared"))


def build():
    p = params()
    inc = [os.path.join(HERE, "inc")]
    return jit.load(name="x", sources=sorted(p.sources), extra_include_paths=inc)
"""


def test_unfollowed_builder_sources_fall_back_to_the_modules_source_paths(tmp_path):
    from cuda2rocm.build_context import is_torch_built, torch_built_dirs

    build = tmp_path / "pkg" / "build.py"
    inc = (tmp_path / "pkg" / "inc").resolve()
    # load() hipifies its sources and the headers of extra_include_paths only: the sources it
    # cannot follow are the module's spelled-out source files (no folder), the include folder
    # is hipified whole
    kernel = tmp_path / "pkg" / "csrc" / "k.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("__global__ void k() {}\n")
    found = torch_built_dirs([(build, JIT_BUILD.encode())])
    assert found == {inc, kernel.resolve()}  # ext.cpp does not exist: not claimed
    assert is_torch_built(str(kernel), found)
    assert not is_torch_built(str(tmp_path / "pkg" / "csrc" / "k.cuh"), found)  # beside it
    # a setup-time builder hipifies the headers its sources include: the module's spelled-out
    # sources stand for the list
    setup = JIT_BUILD.replace("jit.load(", "jit.CUDAExtension(")
    assert torch_built_dirs([(build, setup.encode())]) == {
        (tmp_path / "pkg").resolve(),
        (tmp_path / "pkg" / "csrc").resolve(),
    }
    # a module naming no whole source path claims nothing
    bare = setup.replace('"ext.cpp"', '"ext"').replace('"k.cu"', '"k"')
    assert torch_built_dirs([(build, bare.encode())]) == frozenset()


def test_load_arguments_read_from_the_record_a_module_function_returns():
    """`params = make(); load(sources=params.sources, extra_include_paths=...)` where `make`
    returns a SimpleNamespace: its keywords, read in the function's scope (annotated
    assignments too). A record built elsewhere stays unknown."""
    text = (
        "import os\nfrom types import SimpleNamespace\nimport torch.utils.cpp_extension as jit\n"
        "HERE = os.path.dirname(os.path.abspath(__file__))\n"
        "def make():\n"
        "    sources = [os.path.join(HERE, 'csrc', 'k.cu')]\n"
        "    sources += [os.path.join(HERE, 'ext.cpp')]\n"
        "    includes: list[str] = [os.path.join(HERE, '..', 'common')]\n"
        "    return SimpleNamespace(name='x', sources=sources, extra_include_paths=includes)\n"
        "def build():\n"
        "    params = make()\n"
        "    return jit.load(name=params.name, sources=params.sources,\n"
        "                    extra_include_paths=params.extra_include_paths)\n"
    )
    assert sorted(extension_sources(text)) == ["../common/*", "csrc/k.cu", "ext.cpp"]
    elsewhere = text.replace("    params = make()\n", "    params = helpers.make()\n")
    assert extension_sources(elsewhere) == []


def test_resolved_path_is_path_resolve(tmp_path):
    """Folders resolved once per run, files through their folder unless they are links."""
    from cuda2rocm.build_context import clear_resolved, resolved_parent, resolved_path

    (tmp_path / "real/sub").mkdir(parents=True)
    (tmp_path / "real/sub/k.cu").write_text("")
    (tmp_path / "other").mkdir()
    (tmp_path / "other/target.cu").write_text("")
    (tmp_path / "dir").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "real/sub/link.cu").symlink_to(tmp_path / "other/target.cu")
    clear_resolved()
    for name in (
        "dir/sub/k.cu",
        "dir/sub/link.cu",
        "dir/sub/../sub/k.cu",
        "dir/..",
        "missing/x.cu",
    ):
        path = str(tmp_path / name)
        assert resolved_path(path) == Path(path).resolve(), name
        assert resolved_parent(path) == str(Path(path).resolve().parent), name
    assert resolved_path(str(tmp_path / "dir/sub/link.cu")) == tmp_path / "other/target.cu"


def test_setting_an_environment_variable_keeps_os_known(tmp_path):
    # `os.environ[...] = ...` changes what `os.environ` holds but rebinds no name: `os.getenv`
    # is still the environment read afterwards, so a CUDA-version gate built from it and
    # torch.version.cuda stays false on ROCm. Another subscripted name is forgotten.
    from cuda2rocm.context.build import membership

    setup = tmp_path / "setup.py"
    setup.write_text(
        "import os\nimport torch\n"
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        'os.environ["MAX_JOBS"] = "4"\n'
        'os.environ.setdefault("NVCC_APPEND_FLAGS", "")\n'
        'nv_release = os.getenv("OVERRIDE_NV_RELEASE") or torch.version.cuda\n'
        "amd = torch.version.hip is not None\n"
        "table = {}\n"
        'table["amd"] = amd\n'
        "exts = []\n"
        "if nv_release:\n"
        '    exts.append(CUDAExtension("pkg.mma", ["native/tiles_mma.cu"]))\n'
        'if table["amd"]:\n'
        '    exts.append(CUDAExtension("pkg.amd", ["native/amd_path.cu"]))\n'
        'exts.append(CUDAExtension("pkg.base", ["native/base.cu"]))\n'
        'setup(name="pkg", ext_modules=exts, cmdclass={"build_ext": BuildExtension})\n'
    )
    (tmp_path / "native").mkdir()
    for name in ("tiles_mma.cu", "amd_path.cu", "base.cu"):
        (tmp_path / "native" / name).write_text("__global__ void k() {}\n")
    found = membership([(setup, "setup.py", "python", setup.read_bytes())], tmp_path)
    files = sorted(f.name for c in found.components for f in c.files)
    assert files == ["tiles_mma.cu"]
    assert "if nv_release:" in found.components[0].why
