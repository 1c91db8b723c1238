"""A quoted include that names the project's own file is not the toolkit header it resembles."""

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.engine import Linter
from cuda2rocm.sources import SourceFile

LINTER = Linter(select_rules(load_catalogue(), select=["hip-include"]))
CPP = '#include "cuda/segment_cuda.h"\n#include <cuda/std/limits>\nint f();\n'


def _rules(path):
    source = SourceFile(str(path), "cuda", path.read_text())
    return [(d.rule, d.position.line) for d in LINTER.lint_source(source)]


def test_quoted_include_of_a_project_file_is_not_libcudacxx(tmp_path):
    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda/segment_cuda.h").write_text("int segment();\n")
    (tmp_path / "segment.cpp").write_text(CPP)
    # Only the real libcu++ header is reported; the project's `cuda/segment_cuda.h` is not.
    assert _rules(tmp_path / "segment.cpp") == [("hip-include", 2)]


def test_quoted_include_that_is_no_project_file_is_still_checked(tmp_path):
    (tmp_path / "segment.cpp").write_text(CPP)
    assert _rules(tmp_path / "segment.cpp") == [("hip-include", 1), ("hip-include", 2)]
