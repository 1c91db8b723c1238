"""The whole-tree warm path (cuda2rocm/warm.py): an unchanged tree is answered from a snapshot
without reading, deriving project facts or parsing; any change falls back to a run that sees it.
Instrumented by counting calls, never by timing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuda2rocm import runner
from cuda2rocm.cli import main
from cuda2rocm.engine import Linter

KERNEL = '__global__ void k(int *x) {\n  asm volatile("membar.gl;");\n}\n'
BOTH = """\
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION

mods = [CUDAExtension("ext", sources=["csrc/ptx/k.cu"])]
setup(name="demo", ext_modules=mods)
"""
# The same build, but the extension holding k.cu is built only for CUDA.
CUDA_ONLY = """\
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION

mods = []
if not IS_HIP_EXTENSION:
    mods.append(CUDAExtension("ext", sources=["csrc/ptx/k.cu"]))
setup(name="demo", ext_modules=mods)
"""
FIXABLE = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"
REPORT_ONLY = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"


def _tree(write) -> None:
    write("setup.py", BOTH)
    write("csrc/ptx/k.cu", KERNEL)
    write("pkg/fixable.py", FIXABLE)
    write("pkg/report_only.py", REPORT_ONLY)
    write("pkg/plain.py", "def f(x):\n    return x + 1\n")
    write("pkg/more.py", "import torch\ny = torch.zeros(1, device='hip')\n")


@pytest.fixture
def counted(monkeypatch):
    """Calls of the expensive steps: reading for lint, the project facts, prefilter, parsing."""
    calls = {"read": 0, "prepare": 0, "wants": 0, "lint_source": []}
    read, prepare, wants = Linter.read, runner.prepare, Linter.wants
    lint_source = Linter.lint_source

    def count(name, original):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)

        return wrapper

    def parsing(self, source, rules=None):
        calls["lint_source"].append(Path(source.path).name)
        return lint_source(self, source, rules)

    monkeypatch.setattr(Linter, "read", count("read", read))
    monkeypatch.setattr(runner, "prepare", count("prepare", prepare))
    monkeypatch.setattr(Linter, "wants", count("wants", wants))
    monkeypatch.setattr(Linter, "lint_source", parsing)

    def reset():
        calls.update(read=0, prepare=0, wants=0, lint_source=[])

    calls["reset"] = reset
    return calls


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def _lint(tmp_path: Path, *extra: str) -> str:
    cache = ["--cache-dir", str(tmp_path / "cache")] if "--no-cache" not in extra else []
    result = _cli(
        "lint", "--format", "json", "--show-guarded", "-j", "1", *cache, *extra, str(tmp_path / "t")
    )
    assert result.exit_code in (0, 1), result.output
    return result.output


def _snapshots(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").glob("tree-*.json"))


def test_unchanged_tree_is_answered_from_the_snapshot_byte_for_byte(write, tmp_path, counted):
    _tree(lambda name, text: write(f"t/{name}", text))
    cold = _lint(tmp_path)
    assert counted["prepare"] == 1 and counted["lint_source"]
    assert len(_snapshots(tmp_path)) == 1
    counted["reset"]()
    warm = _lint(tmp_path)
    assert warm == cold
    assert counted["prepare"] == counted["read"] == counted["wants"] == 0
    assert counted["lint_source"] == []
    assert _lint(tmp_path, "--no-cache") == cold
    assert json.loads(cold)["summary"]["diagnostics"] >= 3


def test_a_build_change_that_drops_a_source_from_rocm_changes_the_next_run(
    write, tmp_path, counted
):
    _tree(lambda name, text: write(f"t/{name}", text))
    before = json.loads(_lint(tmp_path))
    ptx = [d for d in before["diagnostics"] if d["rule"] == "inline-ptx"]
    assert [d.get("guarded") for d in ptx] == [None] and ptx[0]["path"].endswith("k.cu")
    (tmp_path / "t/setup.py").write_text(CUDA_ONLY)
    counted["reset"]()
    after = _lint(tmp_path)
    assert counted["prepare"] == 1  # the facts were derived again
    parsed = json.loads(after)
    ptx = [d for d in parsed["diagnostics"] if d["rule"] == "inline-ptx"]
    assert len(ptx) == 1 and "compiles only for CUDA" in ptx[0]["guarded"]
    assert any(d["rule"] == "cuda-only-component" for d in parsed["diagnostics"])
    assert after == _lint(tmp_path, "--no-cache")


def test_an_edit_keeping_size_and_mtime_is_still_seen(write, tmp_path):
    """A write within one clock tick of the run leaves size and mtime alike: such a file is
    recorded as not to be trusted by its stat, and hashed next time."""
    _tree(lambda name, text: write(f"t/{name}", text))
    target = tmp_path / "t/pkg/more.py"
    stat = target.stat()
    first = _lint(tmp_path)
    target.write_text("import torch\ny = torch.zeros(1, device='cpu')\n")  # same size
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert target.stat().st_size == stat.st_size
    second = _lint(tmp_path)
    assert second != first
    assert second == _lint(tmp_path, "--no-cache")


def test_one_changed_file_is_the_only_one_parsed(write, tmp_path, counted):
    _tree(lambda name, text: write(f"t/{name}", text))
    _lint(tmp_path)
    (tmp_path / "t/pkg/more.py").write_text("import torch\ny = torch.zeros(2, device='hip')\n")
    counted["reset"]()
    changed = _lint(tmp_path)
    # linted, then its fix outcome computed (it has a fix: the fixed text is linted too)
    assert counted["lint_source"] == ["more.py", "more.py"]
    assert changed == _lint(tmp_path, "--no-cache")


def test_a_new_word_in_one_python_file_keeps_the_others_cached(write, tmp_path, counted):
    """The project's Python index records names used without a `def` in the same file (a
    function of that name may be called from there); only those that some file defines go
    into every Python file's cache key, so a comment does not invalidate the whole tree."""
    _tree(lambda name, text: write(f"t/{name}", text))
    _lint(tmp_path)
    with (tmp_path / "t/pkg/more.py").open("a") as fh:
        fh.write("# zebra_quagga_word\n")
    counted["reset"]()
    changed = _lint(tmp_path)
    # linted, then its fix outcome computed (it has a fix: the fixed text is linted too)
    assert counted["lint_source"] == ["more.py", "more.py"]
    assert changed == _lint(tmp_path, "--no-cache")
    # A word that names a function defined in the project does change every key.
    with (tmp_path / "t/pkg/more.py").open("a") as fh:
        fh.write("print(f)\n")  # plain.py defines f
    counted["reset"]()
    _lint(tmp_path)
    assert {"fixable.py", "report_only.py", "more.py"} <= set(counted["lint_source"])


@pytest.mark.parametrize(
    "garbage", ["{not json", '{"format": 1, "key": 5}', "[]", '{"format": 1, "files": {"a": 3}}']
)
def test_a_corrupt_snapshot_is_ignored_and_rebuilt(write, tmp_path, counted, garbage):
    _tree(lambda name, text: write(f"t/{name}", text))
    cold = _lint(tmp_path)
    (snapshot,) = _snapshots(tmp_path)
    document = json.loads(snapshot.read_text())
    if garbage.startswith('{"format": 1, "files"'):  # our key, records of the wrong shape
        garbage = json.dumps({**document, "files": {"t/pkg/more.py": 3, "x": [1]}})
    snapshot.write_text(garbage)
    counted["reset"]()
    assert _lint(tmp_path) == cold
    assert counted["prepare"] == 1  # a full run
    assert json.loads(snapshot.read_text())["key"] == document["key"]  # written again
    counted["reset"]()
    assert _lint(tmp_path) == cold and counted["prepare"] == 0


def test_an_unreadable_snapshot_is_not_an_error(write, tmp_path):
    _tree(lambda name, text: write(f"t/{name}", text))
    cold = _lint(tmp_path)
    (snapshot,) = _snapshots(tmp_path)
    snapshot.unlink()
    snapshot.mkdir()  # neither readable nor replaceable as a file
    assert _lint(tmp_path) == cold
    assert _lint(tmp_path) == cold and snapshot.is_dir()


def test_fix_check_after_lint_parses_only_fixable_files_then_nothing(write, tmp_path, counted):
    _tree(lambda name, text: write(f"t/{name}", text))
    args = ["--cache-dir", str(tmp_path / "cache"), "-j", "1", str(tmp_path / "t")]
    _lint(tmp_path)
    # the lint parsed each file once, and the fixed text of the two files with a fix
    assert sorted(counted["lint_source"]) == sorted(
        ["fixable.py", "fixable.py", "more.py", "more.py", "report_only.py", "k.cu"]
    )
    counted["reset"]()
    first = _cli("fix", "--check", "--show-fixes", *args)
    assert first.exit_code == 1, first.output
    # the outcomes are those the lint kept: nothing is parsed, read or derived
    assert counted["lint_source"] == []
    assert counted["prepare"] == counted["read"] == 0
    counted["reset"]()
    second = _cli("fix", "--check", "--show-fixes", *args)
    assert second.exit_code == 1 and second.output == first.output
    assert counted["lint_source"] == [] and counted["prepare"] == 0
    diff = _cli("fix", "--diff", *args)
    assert counted["lint_source"] == []
    no_cache = _cli("fix", "--diff", "--no-cache", "-j", "1", str(tmp_path / "t"))
    assert diff.output == no_cache.output and "torch.amp.autocast" in diff.output
    assert (tmp_path / "t/pkg/fixable.py").read_text() == FIXABLE  # nothing written


def test_fix_after_lint_writes_what_an_uncached_fix_writes(write, tmp_path):
    for root in ("a", "b"):
        _tree(lambda name, text, root=root: write(f"{root}/{name}", text))
    cached = ["--cache-dir", str(tmp_path / "cache"), "-j", "1"]
    _cli("lint", *cached, str(tmp_path / "a"))
    _cli("fix", "--check", *cached, str(tmp_path / "a"))  # outcomes kept
    _cli("fix", *cached, str(tmp_path / "a"))  # written from the kept outcomes
    _cli("fix", "--no-cache", "-j", "1", str(tmp_path / "b"))
    for name in ("pkg/fixable.py", "pkg/more.py", "csrc/ptx/k.cu", "setup.py"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a/pkg/fixable.py").read_text() != FIXABLE


def test_files_outside_the_list_that_the_facts_read_are_watched(write, tmp_path):
    """The project facts may read a file that is not linted (a parent CMakeLists.txt, a build
    helper excluded from the run): the snapshot records it, and a change to it is a change."""
    from cuda2rocm import warm
    from cuda2rocm.cache import Cache
    from cuda2rocm.discover import discover
    from cuda2rocm.engine import LintResult

    write("t/a.py", REPORT_ONLY)
    helper = write("outside/helper.cmake", "set(X 1)\n")
    with warm.watching_reads() as seen:
        helper.read_bytes()
        list((tmp_path / "outside").iterdir())
    assert {str(helper), str(tmp_path / "outside")} <= seen
    items = list(discover([tmp_path / "t"]))
    cache = Cache(tmp_path / "cache", "k")
    snapshot = warm.Snapshot(cache, items)
    snapshot.started_ns += 10 * warm.RACY_NS  # as if the files were written long before
    for item in items:
        snapshot.record(item, item.path.read_bytes())
    snapshot.save(LintResult(files=1), seen)
    assert warm.Snapshot(cache, items).unchanged()
    helper.write_text("set(X 22)\n")
    assert not warm.Snapshot(cache, items).unchanged()


@pytest.mark.parametrize("kind", ["garbage", "foreign-class"])
def test_kept_facts_that_cannot_be_trusted_are_derived_again(write, tmp_path, counted, kind):
    """The facts file is unpickled with only the context model's classes allowed: anything
    else (here a pickle that would call os.system) is refused, and the facts derived anew."""
    import pickle

    _tree(lambda name, text: write(f"t/{name}", text))
    args = ["--cache-dir", str(tmp_path / "cache"), "-j", "1", str(tmp_path / "t")]
    _lint(tmp_path)
    for kept in (tmp_path / "cache").glob("fixes-*.json"):
        kept.unlink()  # the lint's fix outcomes gone: `fix` needs the facts
    expected = _cli("fix", "--diff", "--no-cache", "-j", "1", str(tmp_path / "t")).output
    (facts,) = sorted((tmp_path / "cache").glob("facts-*.pickle"))
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    token = pickle.loads(facts.read_bytes())[0]
    facts.write_bytes(b"\x80\x05junk" if kind == "garbage" else pickle.dumps((token, [Evil()])))
    counted["reset"]()
    assert _cli("fix", "--diff", *args).output == expected
    assert counted["prepare"] == 1 and not marker.exists()


def test_old_snapshots_and_their_facts_are_pruned(write, tmp_path, monkeypatch):
    from cuda2rocm import warm

    monkeypatch.setattr(warm, "KEEP", 2)
    for k in range(4):  # four lists of files: four snapshots written, two kept
        write(f"t/pkg/extra_{k}.py", REPORT_ONLY)
        _lint(tmp_path)
    trees = _snapshots(tmp_path)
    facts = sorted((tmp_path / "cache").glob("facts-*.pickle"))
    assert len(trees) == 2 and len(facts) == 2
    assert {t.stem[5:] for t in trees} == {f.stem[6:] for f in facts}


@pytest.fixture
def memos(monkeypatch):
    """The FactsMemo of each run, to see which parts of the project facts were kept."""
    from cuda2rocm import warm

    made: list = []
    original = warm.FactsMemo.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(warm.FactsMemo, "__init__", init)
    return made


def test_a_changed_file_re_derives_only_the_facts_it_feeds(write, tmp_path, memos):
    _tree(lambda name, text: write(f"t/{name}", text))
    write("t/csrc/ptx/other.cu", KERNEL)
    _lint(tmp_path)
    (tmp_path / "t/csrc/ptx/other.cu").write_text(KERNEL + "// edited\n")
    changed = _lint(tmp_path)
    assert memos[-1].reused == ["python-and-build"]  # the macros were derived again
    assert changed == _lint(tmp_path, "--no-cache")
    (tmp_path / "t/pkg/more.py").write_text("import torch\ny = torch.zeros(3, device='hip')\n")
    changed = _lint(tmp_path)
    # build membership asks nothing of more.py (no build file calls or imports it): kept
    assert memos[-1].reused == ["project-macros", "membership"]
    assert changed == _lint(tmp_path, "--no-cache")
    (tmp_path / "t/setup.py").write_text(CUDA_ONLY)
    changed = _lint(tmp_path)
    assert memos[-1].reused == ["project-macros"]  # setup.py names no macro
    assert changed == _lint(tmp_path, "--no-cache")


def test_a_kept_part_is_derived_again_when_a_file_it_read_changes(tmp_path):
    """Whatever a part read besides its inputs (an item or not) is part of its key."""
    from cuda2rocm import warm
    from cuda2rocm.cache import Cache

    extra = tmp_path / "extra.txt"
    extra.write_text("one")
    cache = Cache(tmp_path / "cache", "k")
    snapshot = warm.Snapshot(cache, [])
    snapshot.started_ns += 10 * warm.RACY_NS  # as if the file were written long before
    memo = warm.FactsMemo(snapshot)
    assert memo.call("part", ["in"], extra.read_text) == "one"
    warm.save_facts(snapshot, object.__new__(type("L", (), dict.fromkeys(warm.FACTS))), memo)
    snapshot.save(warm.LintResult())

    def again(inputs):
        memo = warm.FactsMemo(warm.Snapshot(cache, []))
        return memo.call("part", inputs, extra.read_text), memo.reused

    assert again(["in"]) == ("one", ["part"])
    assert again(["other input"]) == ("one", [])
    extra.write_text("three")
    assert again(["in"]) == ("three", [])


FLAGS = "import torch\n\nIS_ROCM = torch.version.hip is not None\n"
REEXPORT = "# the flags, as torch.version.hip says\nfrom .flags import IS_ROCM\n"
USER = """\
import torch

from .reexport import IS_ROCM

if not IS_ROCM:
    torch.backends.cuda.matmul.allow_tf32 = True
"""


def test_one_changed_python_file_derives_only_its_own_facts(write, tmp_path, memos):
    """The Python facts are kept per file by content: a changed file derives its own words,
    passes and import lists again, the others' are kept; the output is a cold run's."""
    _tree(lambda name, text: write(f"t/{name}", text))
    for k in range(5):
        write(f"t/pkg/other_{k}.py", f"import torch  # torch.version.hip\nX{k} = {k}\n")
    _lint(tmp_path)
    assert memos[-1].file_hits == 0 and memos[-1].file_misses > 0
    (tmp_path / "t/pkg/other_3.py").write_text("import torch  # torch.version.hip\nX3 = 33\n")
    changed = _lint(tmp_path)
    # its words; whether it may define build macros, is a build script, names the CuTe DSL;
    # and one pass per vendor and round (the index has exports: two rounds)
    assert memos[-1].file_misses == 4 + 2 * 2
    assert memos[-1].file_hits > memos[-1].file_misses
    assert changed == _lint(tmp_path, "--no-cache")


def test_a_kept_pass_that_looked_up_a_changed_module_is_derived_again(write, tmp_path, memos):
    """reexport.py is unchanged, but the flag it re-exports from flags.py changed: its kept
    second-round pass looked that flag up, so it is derived again, and user.py's finding is
    no longer guarded."""
    write("t/pkg/__init__.py", "")
    write("t/pkg/flags.py", FLAGS)
    write("t/pkg/reexport.py", REEXPORT)
    write("t/pkg/user.py", USER)
    before = json.loads(_lint(tmp_path))
    assert [d["guarded"] for d in before["diagnostics"]] == [
        "inside `if not IS_ROCM:` (line 5), false on ROCm: ROCm never runs this"
    ]
    # still a file of the index (it names torch.version.hip), with a flag known on both
    (tmp_path / "t/pkg/flags.py").write_text("IS_ROCM = False  # torch.version.hip unread\n")
    changed = _lint(tmp_path)
    assert [d.get("guarded") for d in json.loads(changed)["diagnostics"]] == [None]
    assert changed == _lint(tmp_path, "--no-cache")
    hits = memos[-2].file_hits
    assert hits > 0  # the words of the unchanged files were kept


def test_a_file_that_starts_importing_the_dsl_makes_its_folder_a_component(write, tmp_path):
    """An edit that changes the project facts (here a CuTe DSL package appears) gives what a
    cold run gives."""
    write("t/setup.py", BOTH)
    write("t/csrc/ptx/k.cu", KERNEL)
    write("t/kern/__init__.py", "import cutlass\n")
    write("t/kern/a.py", "import cutlass\n\nX = 1\n")
    write("t/kern/b.py", REPORT_ONLY)
    write("t/kern/c.py", REPORT_ONLY)
    first = _lint(tmp_path)
    assert "cuda-only-component" not in first
    (tmp_path / "t/kern/b.py").write_text("import cutlass\n" + REPORT_ONLY)
    changed = _lint(tmp_path)
    assert "cuda-only-component" in changed
    assert changed == _lint(tmp_path, "--no-cache")
    (tmp_path / "t/kern/b.py").write_text(REPORT_ONLY)
    assert _lint(tmp_path) == first


DEAD_IMPORT = """\
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION

if not IS_HIP_EXTENSION:
    from build_tools.nv import nv_flags

mods = [CUDAExtension("ext", sources=["csrc/k.cu"])]
setup(name="demo", ext_modules=mods)
"""
NV_HELPER = """\
import torch

def nv_flags():
    torch.backends.cuda.matmul.allow_tf32 = True
    return ["-DX"]
"""


def test_kept_build_membership_is_derived_again_when_another_file_names_its_module(
    write, tmp_path, memos
):
    """Membership reads files other than build files only through questions (who names the
    helper module setup.py imports only for CUDA): kept while no answer changes; a plain
    file that starts naming the module makes it a live module, as in a cold run."""
    write("t/setup.py", DEAD_IMPORT)
    write("t/build_tools/__init__.py", "")
    write("t/build_tools/nv.py", NV_HELPER)
    write("t/csrc/k.cu", KERNEL)
    write("t/pkg/plain.py", "def f(x):\n    return x\n")
    for path in (tmp_path / "t").rglob("*"):  # written long before: their stats are trusted
        os.utime(path, (path.stat().st_atime - 60, path.stat().st_mtime - 60))
    first = _lint(tmp_path)
    assert "cuda-only-component" in first
    (tmp_path / "t/pkg/plain.py").write_text("def f(x):\n    return x + 1\n")
    assert _lint(tmp_path) == first
    assert "membership" in memos[-1].reused
    (tmp_path / "t/pkg/plain.py").write_text("from build_tools.nv import nv_flags\n")
    changed = _lint(tmp_path)
    assert "membership" not in memos[-1].reused
    assert "cuda-only-component" not in changed
    assert changed == _lint(tmp_path, "--no-cache")


DEFINES = """\
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

flags = ["-DUSE_FAST=1"]
mods = [CUDAExtension("ext", sources=["csrc/ptx/k.cu"], extra_compile_args={"nvcc": flags})]
setup(name="demo", ext_modules=mods)
"""
GUARDED_KERNEL = """\
__global__ void k(int *x) {
#if USE_FAST
  asm volatile("membar.gl;");
#endif
}
"""


def test_the_macros_are_kept_while_the_build_defines_the_same_flags(write, tmp_path, memos):
    write("t/setup.py", DEFINES)
    write("t/csrc/ptx/k.cu", GUARDED_KERNEL)
    first = _lint(tmp_path)
    (tmp_path / "t/setup.py").write_text(DEFINES + "# a comment\n")
    changed = _lint(tmp_path)
    assert "project-macros" in memos[-1].reused  # the same flags: the macros are kept
    assert changed == first == _lint(tmp_path, "--no-cache")
    (tmp_path / "t/setup.py").write_text(DEFINES.replace("USE_FAST=1", "USE_FAST=0"))
    changed = _lint(tmp_path)
    assert "project-macros" not in memos[-1].reused
    assert changed != first  # the PTX is now in code no build compiles
    assert changed == _lint(tmp_path, "--no-cache")


def test_a_new_file_keeps_the_other_files_facts(write, tmp_path, memos):
    """A file added changes the list of files (a new snapshot), but the per-file facts of
    the latest snapshot still hold: only the new file's are derived."""
    _tree(lambda name, text: write(f"t/{name}", text))
    _lint(tmp_path)
    derived = memos[-1].file_misses
    write("t/pkg/added.py", REPORT_ONLY)
    changed = _lint(tmp_path)
    assert derived > 3 and memos[-1].file_hits >= derived - 1 and memos[-1].file_misses <= 2
    assert changed == _lint(tmp_path, "--no-cache")


def test_a_fix_that_fails_while_linting_does_not_fail_the_lint(write, tmp_path, monkeypatch):
    """The lint keeps fix outcomes as a convenience: a fix that raises leaves the lint's own
    result as it is, and keeps nothing."""
    from cuda2rocm import fixer

    _tree(lambda name, text: write(f"t/{name}", text))
    expected = _lint(tmp_path, "--no-cache")

    def broken(*args, **kwargs):
        raise fixer.FixError("boom")

    monkeypatch.setattr(fixer, "fix_source", broken)
    assert _lint(tmp_path) == expected
    assert not list((tmp_path / "cache").glob("fixes-*.json"))


def _age(root: Path) -> None:
    """Every file written long before the next run: their stats are trusted."""
    for path in root.rglob("*"):
        os.utime(path, (path.stat().st_atime - 60, path.stat().st_mtime - 60))


def test_unchanged_files_are_not_hashed_again_but_a_same_size_edit_is(write, tmp_path, monkeypatch):
    """The full run after one edit takes each unchanged file's hash from the snapshot (its
    trusted size and mtime are as recorded); an edit that keeps the size but not the mtime
    is hashed, and gives what a cold run gives."""
    from cuda2rocm import cache

    _tree(lambda name, text: write(f"t/{name}", text))
    _age(tmp_path / "t")
    _lint(tmp_path)
    hashed: list[bytes] = []
    blake2b = cache.hashlib.blake2b

    class Counting:
        sha256 = staticmethod(cache.hashlib.sha256)

        @staticmethod
        def blake2b(data=b"", **kwargs):
            hashed.append(bytes(data))
            return blake2b(data, **kwargs)

    monkeypatch.setattr(cache, "hashlib", Counting)
    target = tmp_path / "t/pkg/more.py"
    target.write_text(target.read_text().replace("zeros(1", "zeros(2"))  # the same size
    changed = _lint(tmp_path)
    unchanged = {p.read_bytes() for p in (tmp_path / "t").rglob("*") if p.is_file()}
    unchanged.discard(target.read_bytes())
    assert target.read_bytes() in hashed
    assert not unchanged & set(hashed)
    monkeypatch.undo()
    assert changed == _lint(tmp_path, "--no-cache")


FEATURE_H = "#pragma once\n#if __CUDA_ARCH__ >= 530\n#define MY_FAST_HALF 1\n#endif\n"
FEATURE_USER = """\
#include "feature.h"
__device__ float twice(float x) {
#ifdef MY_FAST_HALF
  return __fmul_rn(x, 2.f);
#else
  return x * 2.f;
#endif
}
"""
WARP_DEFS = """\
#pragma once
#ifdef USE_AMD_ROCM
constexpr int kWarpSize = 64;
#else
constexpr int kWarpSize = 32;
#endif
"""
WARP_KERNEL = '#include "defs.cuh"\n__global__ void k(int* o) { o[threadIdx.x % kWarpSize] = 1; }\n'
WARP_CMAKE = (
    'option(P_ROCM "ROCm" OFF)\nif(P_ROCM)\n  add_definitions(-DUSE_AMD_ROCM)\nendif()\n'
    "add_library(p k.cu user.cu other.cu)\n"
)


def _diagnostics(output: str) -> list[tuple[str, str, int, str]]:
    return [
        (Path(d["path"]).name, d["rule"], d["line"], d["severity"])
        for d in json.loads(output)["diagnostics"]
    ]


def test_macro_facts_kept_per_file_follow_edits_of_either_side(write, tmp_path, memos):
    """The project macros keep what each C/C++ file says on its own (feature macros defined
    under `__CUDA_ARCH__`, their uses, warp-size definitions) per file: after an edit of the
    defining header or of a file that uses it, the result is a cold run's. other.cu is never
    edited: its uses are judged again when the header adds a feature macro it names."""
    files = {
        "feature.h": FEATURE_H,
        "user.cu": FEATURE_USER,
        "other.cu": '#include "feature.h"\nint level = NEW_FEAT;\n',
        "defs.cuh": WARP_DEFS,
        "k.cu": WARP_KERNEL,
        "CMakeLists.txt": WARP_CMAKE,
    }
    for name, text in files.items():
        write(f"t/{name}", text)
    _age(tmp_path / "t")
    seen = [_diagnostics(_lint(tmp_path))]

    def edit(name: str, text: str) -> None:
        (tmp_path / "t" / name).write_text(text)
        changed = _lint(tmp_path)
        assert memos[-1].file_hits > 0  # the other files' parts were kept
        assert changed == _lint(tmp_path, "--no-cache")
        seen.append(_diagnostics(changed))

    edit("user.cu", FEATURE_USER + "float speed = MY_FAST_HALF;\n")  # no longer a fallback
    edit("user.cu", FEATURE_USER)
    edit("feature.h", FEATURE_H.replace("#endif", "#define NEW_FEAT 2\n#endif"))
    edit("defs.cuh", WARP_DEFS.replace("kWarpSize = 64", "kWarpSize = WARP_SIZE"))
    arch = [[d[3] for d in s if d[1] == "cuda-arch-macro"] for s in seen]
    assert arch == [["info"], ["warning"], ["info"], ["warning"], ["warning"]]
    assert [any(d[1] == "warp-size-32" for d in s) for s in seen] == [False] * 4 + [True]


TOP_CMAKE = """\
option(P_ROCM "ROCm" OFF)
add_library(p k.cu)
if(P_ROCM)
  enable_language(HIP)
  add_definitions(-DUSE_ROCM)
else()
  target_link_libraries(p PRIVATE ${GPU_LIBS})
endif()
add_subdirectory(src)
"""
SRC_CMAKE = "set(GPU_LIBS CUDA::cudart CUDA::cublas)\nadd_library(q q.cu)\n"


def test_a_cmake_edit_re_lints_the_cmake_files_only(write, tmp_path, counted):
    """What CMake findings' guards read run-wide (every CMake file's uses of a variable) is in
    CMake files' cache keys only: an edit of the top CMakeLists.txt re-lints both CMake files
    (src/CMakeLists.txt's `set()` is used in the top file's live code now), not the kernels
    or the Python files; the result is a cold run's."""
    write("t/CMakeLists.txt", TOP_CMAKE)
    write("t/src/CMakeLists.txt", SRC_CMAKE)
    write("t/k.cu", KERNEL)
    write("t/src/q.cu", KERNEL)
    write("t/pkg/more.py", "import torch\ny = torch.zeros(1, device='hip')\n")
    _age(tmp_path / "t")
    first = json.loads(_lint(tmp_path))

    def on_set(result: dict) -> list[dict]:
        return [
            d
            for d in result["diagnostics"]
            if d["path"].endswith("src/CMakeLists.txt") and d["line"] == 1
        ]

    dead = on_set(first)
    assert dead and all("used only where a ROCm configure never goes" in d["guarded"] for d in dead)
    counted["reset"]()
    (tmp_path / "t/CMakeLists.txt").write_text(
        TOP_CMAKE + "target_link_libraries(p PUBLIC ${GPU_LIBS})\n"
    )
    changed = _lint(tmp_path)
    assert sorted(counted["lint_source"]) == ["CMakeLists.txt", "CMakeLists.txt"]
    live = on_set(json.loads(changed))
    assert live and not any(d.get("guarded") for d in live)
    assert changed == _lint(tmp_path, "--no-cache")


def test_a_cmake_edit_that_builds_a_vendored_source_re_lints_it(write, tmp_path):
    """Which sources no build compiles (`context.unbuilt`, read from the CMake files) is in
    every file's key: an unchanged source that the top CMakeLists.txt starts to build is
    linted again, and its findings are no longer guarded."""
    top = "project(p)\nadd_library(p k.cu)\n"
    write("t/CMakeLists.txt", top)
    write("t/vendored/CMakeLists.txt", "add_executable(ex ex.cu)\n")
    write("t/k.cu", "__global__ void k() {}\n")
    write("t/vendored/ex.cu", KERNEL)
    _age(tmp_path / "t")

    def on_ex(output: str) -> list:
        return [d.get("guarded") for d in json.loads(output)["diagnostics"] if "ex.cu" in d["path"]]

    assert all(on_ex(_lint(tmp_path))) and on_ex(_lint(tmp_path))
    (tmp_path / "t/CMakeLists.txt").write_text(top + "add_subdirectory(vendored)\n")
    changed = _lint(tmp_path)
    assert on_ex(changed) and not any(on_ex(changed))
    assert changed == _lint(tmp_path, "--no-cache")


def test_paths_are_resolved_again_in_each_run(write, tmp_path):
    """A file's resolved path is kept within a run only: after a symlink on the way to it
    changes, a second run in the same process sees it in the new tree's torch-built folder
    (here an identical copy), exactly as the first run saw it in the old one."""
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
        'setup(name="d", ext_modules=[CUDAExtension("e", sources=["csrc/k.cu"])])\n'
    )
    for copy in ("t1", "t2"):
        write(f"{copy}/setup.py", setup)
        write(
            f"{copy}/csrc/k.cu",
            "#include <cuda_runtime.h>\nvoid f(float** p) { cudaMalloc(p, 4); }\n",
        )
    link = tmp_path / "tlink"
    link.symlink_to(tmp_path / "t1", target_is_directory=True)

    def lint() -> list:
        result = _cli("lint", "--format", "json", "--no-cache", "-j", "1", str(link))
        return json.loads(result.output)["diagnostics"]

    assert lint() == []  # torch's build hipifies k.cu: nothing to map
    link.unlink()
    link.symlink_to(tmp_path / "t2", target_is_directory=True)
    assert lint() == []


def test_a_kept_header_scan_is_checked_against_the_headers_it_includes(write, tmp_path):
    """mid.h is unchanged, but the header it includes now sets USE_FAST to 0: its kept
    preprocessor pass saw the old state of cfg.h, so it is derived again, and the PTX in
    k.cu (which sees cfg.h only through mid.h) is in code no ROCm build compiles."""
    write("t/cfg.h", "#pragma once\n#define USE_FAST 1\n")
    write("t/mid.h", '#pragma once\n#include "cfg.h"\n#define MID 1\n')
    kernel = '#include "mid.h"\n__global__ void k(int *x) {\n#if USE_FAST\n'
    write("t/k.cu", kernel + '  asm volatile("membar.gl;");\n#endif\n}\n')
    _age(tmp_path / "t")

    def ptx(output: str) -> list:
        diagnostics = json.loads(output)["diagnostics"]
        return [bool(d.get("guarded")) for d in diagnostics if d["rule"] == "inline-ptx"]

    assert ptx(_lint(tmp_path)) == [False]
    (tmp_path / "t/cfg.h").write_text("#pragma once\n#define USE_FAST 0\n")
    changed = _lint(tmp_path)
    assert ptx(changed) == [True]
    assert changed == _lint(tmp_path, "--no-cache")


def test_headers_that_include_each_other_give_a_cold_runs_result(write, tmp_path):
    """An include cycle scans a header again inside its own scan (it is not yet in progress
    there); each such pass is checked on its own, never answered with another's."""
    write("t/a.h", '#pragma once\n#include "b.h"\n#ifndef B_SEEN\n#define A_FIRST 1\n#endif\n')
    write(
        "t/b.h",
        '#pragma once\n#define B_SEEN 1\n#include "a.h"\n#ifdef A_FIRST\n#define X 1\n#endif\n',
    )
    kernel = '#include "a.h"\n__global__ void k(int *x) {\n#if X\n'
    write("t/k.cu", kernel + '  asm volatile("membar.gl;");\n#endif\n}\n')
    write(
        "t/u.cu",
        '#include "b.h"\n__global__ void u() {\n#ifdef A_FIRST\n  __syncwarp();\n#endif\n}\n',
    )
    _age(tmp_path / "t")
    first = _lint(tmp_path)
    assert first == _lint(tmp_path, "--no-cache")
    for name in ("u.cu", "k.cu", "b.h"):
        with (tmp_path / "t" / name).open("a") as fh:
            fh.write("// touched\n")
        assert _lint(tmp_path) == _lint(tmp_path, "--no-cache"), name


def test_a_kept_line_model_is_checked_against_the_headers_it_includes(write, tmp_path):
    """Whether a header is ever included on ROCm reads its includers' line models: k.cu is
    unchanged, but USE_FAST (from cfg.h through mid.h) now lets it include other.h, whose
    PTX is then reported, as in a cold run."""
    write("t/cfg.h", "#pragma once\n#define USE_FAST 0\n")
    write("t/mid.h", '#pragma once\n#include "cfg.h"\n#define MID 1\n')
    write("t/k.cu", '#include "mid.h"\n#if USE_FAST\n#include "other.h"\n#endif\n')
    write("t/other.h", '#pragma once\n__device__ void f() { asm volatile("membar.gl;"); }\n')
    _age(tmp_path / "t")

    def ptx(output: str) -> list:
        diagnostics = json.loads(output)["diagnostics"]
        return [bool(d.get("guarded")) for d in diagnostics if d["rule"] == "inline-ptx"]

    assert ptx(_lint(tmp_path)) == [True]
    (tmp_path / "t/cfg.h").write_text("#pragma once\n#define USE_FAST 1\n")
    changed = _lint(tmp_path)
    assert ptx(changed) == [False]
    assert changed == _lint(tmp_path, "--no-cache")


EXT_HELPER = """\
import os

from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION


def make(src):
    if not IS_HIP_EXTENSION:
        return CUDAExtension("e", sources=[os.path.join(src, "k.cu")])
    return None
"""
EXT_SETUP = """\
from setuptools import setup

from build_tools.ext import make

setup(name="d", ext_modules=[make("csrc")])
"""


def test_a_kept_build_file_is_checked_against_the_callers_it_asked_about(write, tmp_path):
    """build_tools/ext.py is unchanged, but the folder its callers pass changed: its kept
    components (from the answer to "who calls make") are derived again."""
    write("t/build_tools/__init__.py", "")
    write("t/build_tools/ext.py", EXT_HELPER)
    write("t/setup.py", EXT_SETUP)
    write("t/csrc/k.cu", KERNEL)
    write("t/other/k.cu", KERNEL)
    _age(tmp_path / "t")

    def guarded(output: str) -> dict:
        diagnostics = json.loads(output)["diagnostics"]
        return {
            Path(d["path"]).parent.name: bool(d.get("guarded"))
            for d in diagnostics
            if d["rule"] == "inline-ptx"
        }

    assert guarded(_lint(tmp_path)) == {"csrc": True, "other": False}
    (tmp_path / "t/setup.py").write_text(EXT_SETUP.replace('"csrc"', '"other"'))
    changed = _lint(tmp_path)
    assert guarded(changed) == {"csrc": False, "other": True}
    assert changed == _lint(tmp_path, "--no-cache")


def test_questions_of_a_kept_build_file_still_guard_the_whole_membership(write, tmp_path):
    """Another build file's edit derives the membership again with ext.py's part kept: the
    questions that part asked are still among the membership's, so a later edit of only
    their answer (setup.py, not a build file) is seen."""
    write("t/build_tools/__init__.py", "")
    write("t/build_tools/ext.py", EXT_HELPER)
    write("t/build_tools/plain_ext.py", "from torch.utils.cpp_extension import CppExtension\n")
    write("t/setup.py", EXT_SETUP)
    write("t/csrc/k.cu", KERNEL)
    write("t/other/k.cu", KERNEL)
    _age(tmp_path / "t")
    first = _lint(tmp_path)
    with (tmp_path / "t/build_tools/plain_ext.py").open("a") as fh:
        fh.write("X = 1\n")
    assert _lint(tmp_path) == first
    (tmp_path / "t/setup.py").write_text(EXT_SETUP.replace('"csrc"', '"other"'))
    changed = _lint(tmp_path)
    assert changed != first
    assert changed == _lint(tmp_path, "--no-cache")
