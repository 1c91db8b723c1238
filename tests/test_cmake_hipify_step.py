"""A hipify step the project's CMake runs itself: what it reads is translated on ROCm."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import write_tree

from cuda2rocm.context.cmake_hipify import cmake_hipified

STREAMY = "#include <cuda_runtime.h>\nvoid drain(cudaStream_t s) { cudaStreamSynchronize(s); }\n"

PORT_FUNCTION = """
function(port_to_amd SRC_DIR)
  execute_process(
    COMMAND hipify-perl -inplace -print-stats ${SRC_DIR}
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    RESULT_VARIABLE rc)
endfunction()
"""


def _stream_folders(root: Path) -> set[str]:
    cmd = [sys.executable, "-m", "cuda2rocm", "lint", "--no-cache", "--format", "json"]
    cmd += ["--select", "hip-stream", "--exit-zero", str(root)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return {Path(d["path"]).parent.name for d in json.loads(out)["diagnostics"]}


def test_function_running_hipify_perl_covers_the_folder_it_is_called_with(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(lathe CXX)\ninclude(cmake/port.cmake)\n"
            "if(LATHE_AMD)\n  port_to_amd(gears)\nendif()\n",
            "cmake/port.cmake": PORT_FUNCTION,
            "gears/spin.cu": STREAMY,
            "belts/spin.cu": STREAMY,
        },
    )
    # gears/ is renamed by the project's own HIP pass; belts/ is not covered by it.
    assert _stream_folders(tmp_path) == {"belts"}


def test_nothing_runs_the_function_nothing_is_covered(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(lathe CXX)\ninclude(cmake/port.cmake)\n",
            "cmake/port.cmake": PORT_FUNCTION,
            "gears/spin.cu": STREAMY,
        },
    )
    assert _stream_folders(tmp_path) == {"gears"}


def _covered(root: Path, cmake: str, extra: dict[str, str] | None = None) -> set[str]:
    files = {"CMakeLists.txt": "project(p)\n" + cmake, **(extra or {})}
    write_tree(root, files)
    scripts = {(root / n).resolve(): t.encode() for n, t in files.items() if n.endswith(".py")}
    found = cmake_hipified([(root / "CMakeLists.txt", files["CMakeLists.txt"].encode())], scripts)
    return {str(p.relative_to(root.resolve())) for p in found}


def test_paths_through_variables_globs_and_loops(tmp_path: Path) -> None:
    for name in ("a/x.cu", "a/y.cu", "a/z.h", "b/k.cu", "c/q.cu"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(STREAMY)
    cmake = (
        "find_program(PORTER NAMES hipify-clang)\n"
        "file(GLOB KERNELS a/*.cu)\n"
        "foreach(k ${KERNELS})\n"
        "  add_custom_command(OUTPUT ${k}.hip COMMAND ${PORTER} ${k} -o ${k}.hip)\n"
        "endforeach()\n"
        'set(BDIR "${PROJECT_SOURCE_DIR}/b")\n'
        "execute_process(COMMAND hipify-perl -inplace ${BDIR})\n"
        "execute_process(COMMAND hipify-perl c)\n"  # relative, no WORKING_DIRECTORY: unknown
        "execute_process(COMMAND cp -r ${CMAKE_CURRENT_SOURCE_DIR}/c /tmp)\n"  # no hipify
    )
    assert _covered(tmp_path, cmake) == {"a/x.cu", "a/y.cu", "b"}


def test_output_folder_is_written_not_read_and_scripts_count(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "gen").mkdir()
    port = (
        "import sys\nfrom torch.utils.hipify import hipify_python\n"
        "hipify_python.hipify(project_directory=sys.argv[1], output_directory=sys.argv[2])\n"
    )
    cmake = (
        "function(amd_port)\n"
        '  cmake_parse_arguments(P "" "FROM;TO" "" ${ARGN})\n'
        "  execute_process(COMMAND python3 ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/tools/port.py\n"
        "                  --input=${P_FROM} --output-directory ${P_TO})\n"
        "endfunction()\n"
        "amd_port(FROM ${CMAKE_CURRENT_SOURCE_DIR}/src TO ${CMAKE_CURRENT_SOURCE_DIR}/gen)\n"
        "execute_process(COMMAND python3 tools/other.py ${CMAKE_CURRENT_SOURCE_DIR}/gen)\n"
    )
    extra = {"tools/port.py": port, "tools/other.py": "print('not a port')\n"}
    assert _covered(tmp_path, cmake, extra) == {"src"}


def test_python_hipify_selects_files_as_torch_does(tmp_path: Path) -> None:
    from cuda2rocm.context.python_hipify import python_hipified_dirs

    setup = (
        "from torch.utils.hipify import hipify_python\n"
        "KEEP = ('.cu', '.cuh')\n"
        'hipify_python.hipify(project_directory="native", output_directory="native",\n'
        '                     includes=["native/ops/*"], ignores=["*/legacy/*"], extensions=KEEP)\n'
    )
    names = ("ops/a.cu", "ops/deep/b.cuh", "ops/legacy/c.cu", "ops/d.inl", "misc/e.cu")
    for name in names:
        (tmp_path / "native" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "native" / name).write_text(STREAMY)
    found = python_hipified_dirs([(tmp_path / "setup.py", setup.encode())])
    root = (tmp_path / "native").resolve()
    # includes narrow to ops/, ignores drop legacy/, extensions drop the .inl
    assert {str(p.relative_to(root)) for p in found} == {"ops/a.cu", "ops/deep/b.cuh"}
    # `includes` the build computes at run time: claims nothing
    unknown = setup.replace('includes=["native/ops/*"]', "includes=pick()")
    assert python_hipified_dirs([(tmp_path / "setup.py", unknown.encode())]) == frozenset()
