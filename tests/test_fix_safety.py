"""`fix` never loses anything: encoding, BOM, newlines, mode; refuses results that do not parse."""

from __future__ import annotations

import codecs
import os
import stat

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import apply_edits, fix_paths, fix_source
from cuda2rocm.model import Diagnostic, Edit, Fix, Position, Safety, Severity
from cuda2rocm.sources import SourceFile

LINTER = Linter(select_rules(load_catalogue()))
BAD = 'import torch\nx = torch.zeros(1, device="hip")\n'
GOOD = 'import torch\nx = torch.zeros(1, device="cuda")\n'


def test_crlf_and_bom_are_kept(write, tmp_path):
    path = write("win.py", codecs.BOM_UTF8 + BAD.replace("\n", "\r\n").encode())
    fix_paths(LINTER, [str(tmp_path)])
    assert path.read_bytes() == codecs.BOM_UTF8 + GOOD.replace("\n", "\r\n").encode()


def test_mixed_line_endings_are_kept_line_by_line(write, tmp_path):
    path = write("mixed.py", b'import torch\r\nx = 1\ny = torch.device("hip")\r\n')
    fix_paths(LINTER, [str(tmp_path)])
    assert path.read_bytes() == b'import torch\r\nx = 1\ny = torch.device("cuda")\r\n'


def test_declared_latin1_encoding_is_kept(write, tmp_path):
    text = '# -*- coding: latin-1 -*-\n# Gr\xfc\xdfe\nimport torch\nd = torch.device("hip")\n'
    path = write("latin.py", text.encode("latin-1"))
    fix_paths(LINTER, [str(tmp_path)])
    assert path.read_bytes() == text.replace('"hip"', '"cuda"').encode("latin-1")


def test_non_ascii_positions_are_in_characters(write, tmp_path):
    path = write("u.py", 'import torch\nname = "Ünïcødé"; d = torch.device("hip")\n')
    diagnostics = LINTER.lint_paths([str(tmp_path)]).diagnostics
    assert [(d.position.line, d.position.column) for d in diagnostics] == [(2, 36)]
    fix_paths(LINTER, [str(tmp_path)])
    assert path.read_text(encoding="utf-8").endswith('torch.device("cuda")\n')


def test_file_mode_is_kept_and_no_temporary_files_remain(write, tmp_path):
    path = write("tool.py", BAD)
    os.chmod(path, 0o754)
    fix_paths(LINTER, [str(tmp_path)])
    assert stat.S_IMODE(path.stat().st_mode) == 0o754
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tool.py"]


def test_unchanged_files_are_not_touched(write, tmp_path):
    clean = write("clean.py", 'import torch\nx = torch.zeros(1, device="cuda")\n')
    untouched = write("notes.py", "print('nothing to see')\n")
    before = (clean.stat().st_mtime_ns, untouched.stat().st_mtime_ns)
    report = fix_paths(LINTER, [str(tmp_path)])
    assert not any(o.changed for o in report.outcomes)
    assert (clean.stat().st_mtime_ns, untouched.stat().st_mtime_ns) == before


def test_diff_mode_writes_nothing(write, tmp_path):
    path = write("bad.py", BAD)
    report = fix_paths(LINTER, [str(tmp_path)], write=False)
    assert report.outcomes[0].changed
    assert path.read_text() == BAD


def _breaking_lint(source: SourceFile) -> list[Diagnostic]:
    """A deliberately wrong rule whose fix would delete a closing parenthesis."""
    found = LINTER.lint_source(source)
    index = source.text.find(")")
    if index >= 0 and not any(d.rule == "parse-error" for d in found):
        found.append(
            Diagnostic(
                source.path,
                "test-rule",
                "CR999",
                Severity.ERROR,
                9,
                Position(1, 1, 1, 1),
                "bad",
                Fix(Safety.SAFE, (Edit(index, index + 1, "", ")"),)),
            )
        )
    return found


def test_a_fix_that_breaks_parsing_is_refused():
    source = SourceFile("x.py", "python", BAD)
    outcome = fix_source(source, _breaking_lint, syntax_error=LINTER.syntax_error)
    assert outcome.refused and "would not parse" in outcome.refused
    assert outcome.fixed == BAD
    assert not outcome.changed


def test_overlapping_fixes_wait_for_the_next_round():
    text = "abcdef"
    assert apply_edits(text, [Edit(0, 1, "X", "a"), Edit(3, 3, "-", "")]) == "Xbc-def"


def test_undecodable_file_is_reported_not_fixed(write, tmp_path):
    path = write("bad.py", b'import torch\nx = "\xff\xfe"\nd = torch.device("hip")\n')
    report = fix_paths(LINTER, [str(tmp_path)])
    assert report.errors and "not valid utf-8" in report.errors[0][1]
    assert path.read_bytes() == b'import torch\nx = "\xff\xfe"\nd = torch.device("hip")\n'
