"""Include context (context/include_context.py, project_port, cython_includes): a header is
compiled inside each unit that includes it, after what the unit included before it. Names the
project maps in another header are its own port in a header every includer of which (through
C/C++ `#include`s or Cython `cdef extern from` / `include`) has brought that mapping in first;
one includer that has not keeps the finding, and so does a header no file includes."""

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context import cython_includes, include_context
from cuda2rocm.engine import Linter

#: The mapping, under the compiler's HIP macro (HIP spellings).
MAPPING = """\
#pragma once
#ifdef __HIP_PLATFORM_AMD__
#include <hip/hip_runtime.h>
#define cudaStreamQuery hipStreamQuery
typedef hipStream_t cudaStream_t;
#endif
"""
#: A header that uses the CUDA spellings and includes nothing that maps them.
USER = """\
#pragma once
inline int poll_lane(cudaStream_t lane) { return (int)cudaStreamQuery(lane); }
"""


def _findings(root: Path, rule: str = "hip-stream") -> dict[str, list[int]]:
    specs = [r for r in load_catalogue() if r.id == rule]
    result = runner.run(Linter(specs), [root])
    out: dict[str, list[int]] = {}
    for d in result.diagnostics:
        if d.rule == rule and not d.guarded:
            where = Path(d.path).resolve().relative_to(root.resolve()).as_posix()
            out.setdefault(where, []).append(d.position.line)
    return out


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_header_every_includer_maps_first_is_the_projects_port(tmp_path):
    _tree(
        tmp_path,
        {
            "gpu/remap.h": MAPPING,
            "gpu/lanes.h": USER,
            "src/pump.cu": '#include "../gpu/remap.h"\n#include "../gpu/lanes.h"\nint x;\n',
        },
    )
    assert "gpu/lanes.h" not in _findings(tmp_path)


def test_the_opposite_order_keeps_the_finding(tmp_path):
    _tree(
        tmp_path,
        {
            "gpu/remap.h": MAPPING,
            "gpu/lanes.h": USER,
            "src/pump.cu": '#include "../gpu/lanes.h"\n#include "../gpu/remap.h"\nint x;\n',
        },
    )
    assert _findings(tmp_path).get("gpu/lanes.h") == [2]


def test_one_includer_without_the_mapping_keeps_the_finding(tmp_path):
    _tree(
        tmp_path,
        {
            "gpu/remap.h": MAPPING,
            "gpu/lanes.h": USER,
            "src/pump.cu": '#include "../gpu/remap.h"\n#include "../gpu/lanes.h"\n',
            "src/drain.cpp": '#include <cstdio>\n#include "../gpu/lanes.h"\n',
        },
    )
    assert _findings(tmp_path).get("gpu/lanes.h") == [2]


def test_a_header_nothing_includes_gets_nothing(tmp_path):
    _tree(tmp_path, {"gpu/remap.h": MAPPING, "gpu/lanes.h": USER})
    assert _findings(tmp_path).get("gpu/lanes.h") == [2]


def test_through_a_header_that_includes_the_mapping_first(tmp_path):
    # The unit includes a hub header that brings the mapping in, then (nested) the user.
    _tree(
        tmp_path,
        {
            "gpu/remap.h": MAPPING,
            "gpu/lanes.h": USER,
            "gpu/hub.h": '#pragma once\n#include "remap.h"\n#include "wrap.h"\n',
            "gpu/wrap.h": '#pragma once\n#include "lanes.h"\n',
            "src/pump.cu": '#include "../gpu/hub.h"\n',
            "src/other.cu": '#include "../gpu/hub.h"\n#include "../gpu/wrap.h"\n',
        },
    )
    assert "gpu/lanes.h" not in _findings(tmp_path)


def test_a_mapping_only_where_rocm_skips_it_does_not_count(tmp_path):
    cuda_side = MAPPING.replace("#ifdef __HIP_PLATFORM_AMD__", "#ifndef __HIP_PLATFORM_AMD__")
    _tree(
        tmp_path,
        {
            "gpu/remap.h": cuda_side,
            "gpu/lanes.h": USER,
            "src/pump.cu": '#include "../gpu/remap.h"\n#include "../gpu/lanes.h"\n',
        },
    )
    assert _findings(tmp_path).get("gpu/lanes.h") == [2]


def test_a_definition_in_the_includer_under_its_hip_branch(tmp_path):
    unit = (
        "#if defined(__HIP_PLATFORM_AMD__)\n"
        "#include <hip/hip_runtime.h>\n"
        "#define cudaStreamQuery hipStreamQuery\n"
        "#define cudaStream_t hipStream_t\n"
        "#endif\n"
        '#include "../gpu/lanes.h"\n'
    )
    _tree(tmp_path, {"gpu/lanes.h": USER, "src/pump.cu": unit})
    assert "gpu/lanes.h" not in _findings(tmp_path)


def test_an_include_every_hip_pass_skips_brings_nothing(tmp_path):
    unit = (
        "#ifndef __HIP_PLATFORM_AMD__\n"
        '#include "../gpu/remap.h"\n'
        "#endif\n"
        '#include "../gpu/lanes.h"\n'
    )
    _tree(tmp_path, {"gpu/remap.h": MAPPING, "gpu/lanes.h": USER, "src/pump.cu": unit})
    assert _findings(tmp_path).get("gpu/lanes.h") == [2]


def test_cython_extern_blocks_include_in_order(tmp_path):
    ordered = (
        'cdef extern from "../gpu/remap.h":\n    pass\n\n'
        'cdef extern from "../gpu/lanes.h" nogil:\n    int poll_lane(void*)\n'
    )
    _tree(tmp_path, {"gpu/remap.h": MAPPING, "gpu/lanes.h": USER, "py/lanes.pyx": ordered})
    assert "gpu/lanes.h" not in _findings(tmp_path)
    reversed_ = (
        'cdef extern from "../gpu/lanes.h":\n    int poll_lane(void*)\n'
        'cdef extern from "../gpu/remap.h":\n    pass\n'
    )
    (tmp_path / "py" / "lanes.pyx").write_text(reversed_)
    assert _findings(tmp_path).get("gpu/lanes.h") == [2]


def test_a_pxi_brings_its_extern_blocks_in_place(tmp_path):
    _tree(
        tmp_path,
        {
            "gpu/remap.h": MAPPING,
            "gpu/lanes.h": USER,
            "py/remap.pxi": 'cdef extern from "../gpu/remap.h":\n    pass\n',
            "py/lanes.pyx": (
                "# the mapping first\n"
                'include "remap.pxi"\n'
                'cdef extern from "../gpu/lanes.h":\n    int poll_lane(void*)\n'
            ),
        },
    )
    assert "gpu/lanes.h" not in _findings(tmp_path)


def test_a_header_only_cython_includes_is_not_unincluded(tmp_path):
    # The C++ side includes the header only where ROCm skips it; the .pyx includes it too.
    unit = '#ifndef __HIP_PLATFORM_AMD__\n#include "../gpu/lanes.h"\n#endif\n'
    _tree(
        tmp_path,
        {
            "gpu/lanes.h": USER,
            "src/pump.cu": unit,
            "py/lanes.pyx": 'cdef extern from "../gpu/lanes.h":\n    int poll_lane(void*)\n',
        },
    )
    assert _findings(tmp_path).get("gpu/lanes.h") == [2]
    (tmp_path / "py" / "lanes.pyx").unlink()
    assert "gpu/lanes.h" not in _findings(tmp_path)  # unincluded on ROCm without it


def test_cython_include_lines_in_file_order():
    text = (
        "# cdef extern from 'commented.h':\n"
        'include "helpers.pxi"\n'
        "cdef extern from 'first.h' namespace \"ns\":\n"
        "    pass\n"
        "cdef extern from *:\n"
        '    """int verbatim;"""\n'
        '    extern from "second.h":\n'
    )
    assert cython_includes.includes(text) == (
        ("include", "helpers.pxi", 2),
        ("extern", "first.h", 3),
        ("extern", "second.h", 7),
    )


def test_names_before_is_the_intersection_over_units():
    files = {
        "a.cu": include_context.events([("cuA", 1, "a:1"), ("cuB", 2, "a:2")], [("h.h", 3)]),
        "b.cu": include_context.events([("cuB", 5, "b:5")], [("h.h", 1), ("g.h", 6)]),
        "c.cu": include_context.events([], [("g.h", 1)]),
        "g.h": include_context.events([("cuC", 2, "g:2")], [("h.h", 3)]),
    }
    got = include_context.names_before(files, lambda p: p.endswith(".h"))
    # h.h: a.cu had cuA and cuB; b.cu met it first at line 1, with nothing defined.
    assert "h.h" not in got
    # g.h: b.cu had cuB at line 5; c.cu nothing: empty.
    assert "g.h" not in got
    files["b.cu"] = include_context.events([("cuB", 1, "b:1")], [("h.h", 2)])
    got = include_context.names_before(files, lambda p: p.endswith(".h"))
    # h.h: a.cu {cuA, cuB}; b.cu {cuB}; c.cu through g.h {cuC}: nothing common.
    assert "h.h" not in got
    del files["c.cu"], files["g.h"]  # (a header nothing includes is a root of its own)
    got = include_context.names_before(files, lambda p: p.endswith(".h"))
    assert got == {"h.h": {"cuB": "a:2"}}
