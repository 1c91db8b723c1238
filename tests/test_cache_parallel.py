"""Result cache and parallel runs: same results, invalidated exactly when they must be."""

from __future__ import annotations

import json
from pathlib import Path

from cuda2rocm import cache as cache_module
from cuda2rocm import runner
from cuda2rocm.cache import Cache, fingerprint
from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.engine import Linter

BAD = 'import torch\nx = torch.zeros(1, device="hip")\n'
RULES = select_rules(load_catalogue())


def _tree(write, n: int = 40) -> None:
    for i in range(n):
        body = BAD if i % 3 else "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"
        write(f"pkg/mod_{i:03}.py", f"# module {i}\n" + body)
        write(f"pkg/plain_{i:03}.py", f"def f{i}(x):\n    return x + {i}\n")


def _json(result) -> list:
    return [d.to_json() for d in result.diagnostics]


def test_parallel_and_serial_runs_are_identical(write, tmp_path, cli):
    _tree(write)
    linter = Linter(RULES)
    serial = runner.run(linter, [tmp_path], jobs=1)
    parallel = runner.run(linter, [tmp_path], jobs=2)
    assert len(serial.diagnostics) == 40
    assert _json(serial) == _json(parallel)
    one = cli("lint", "--no-cache", "-j", "1", "--format", "json", str(tmp_path)).stdout
    two = cli("lint", "--no-cache", "-j", "2", "--format", "json", str(tmp_path)).stdout
    assert one == two and json.loads(one)["summary"]["diagnostics"] == 40


def test_warm_run_uses_the_cache_and_a_content_change_invalidates(write, tmp_path):
    _tree(write, 10)
    linter = Linter(RULES)
    first = Cache(tmp_path / "cache", "k")
    cold = runner.run(linter, [tmp_path / "pkg"], cache=first)
    assert first.hits == 0
    warm_cache = Cache(tmp_path / "cache", "k")
    warm = runner.run(linter, [tmp_path / "pkg"], cache=warm_cache)
    assert warm_cache.hits == 10 and _json(warm) == _json(cold)
    changed = tmp_path / "pkg" / "mod_001.py"
    changed.write_text("import torch\nx = torch.zeros(1, device='cuda')\n")
    third = Cache(tmp_path / "cache", "k")
    after = runner.run(linter, [tmp_path / "pkg"], cache=third)
    assert third.hits == 9
    assert len(after.diagnostics) == len(cold.diagnostics) - 1


def test_config_and_version_changes_change_the_key(tmp_path):
    base = fingerprint([["device-string-hip"], "portable"])
    assert fingerprint([["device-string-hip"], "hip"]) != base
    assert fingerprint([["device-string-hip", "pin-memory"], "portable"]) != base
    assert fingerprint([["device-string-hip"], "portable"], version="99.0") != base
    assert fingerprint([["device-string-hip"], "portable"]) == base


def test_code_change_changes_the_key(monkeypatch):
    base = fingerprint([])
    monkeypatch.setattr(cache_module, "_code_digest", lambda: "something else")
    assert fingerprint([]) != base


def test_a_foreign_key_or_corrupt_cache_is_ignored_and_rebuilt(write, tmp_path):
    _tree(write, 3)
    linter = Linter(RULES)
    runner.run(linter, [tmp_path / "pkg"], cache=Cache(tmp_path / "c", "one"))
    other = Cache(tmp_path / "c", "two")
    assert other.entries == {}
    (tmp_path / "c" / "results-one.json").write_text("{not json")
    rebuilt = Cache(tmp_path / "c", "one")
    assert rebuilt.entries == {}
    result = runner.run(linter, [tmp_path / "pkg"], cache=rebuilt)
    assert len(result.diagnostics) == 3
    assert json.loads((tmp_path / "c" / "results-one.json").read_text())["key"] == "one"
    (tmp_path / "c" / "results-one.json").write_text('{"key": "one", "entries": {"x": 5}}')
    assert runner.run(linter, [tmp_path / "pkg"], cache=Cache(tmp_path / "c", "one")).diagnostics


def test_cli_cache_config_change_and_clean(cli, write, tmp_path):
    write("a.py", BAD)
    cache_dir = tmp_path / "cachedir"
    args = ["lint", "--cache-dir", str(cache_dir), "--format", "json", str(tmp_path)]
    first = json.loads(cli(*args).stdout)
    assert first["summary"]["diagnostics"] == 1
    assert len(list(cache_dir.glob("results-*.json"))) == 1
    assert (cache_dir / "CACHEDIR.TAG").exists()
    write("pyproject.toml", '[tool.cuda2rocm]\nseverity = { CR102 = "info" }\n')
    second = json.loads(cli(*args).stdout)
    assert second["diagnostics"][0]["severity"] == "info"
    assert len(list(cache_dir.glob("results-*.json"))) == 2
    result = cli("clean", "--cache-dir", str(cache_dir))
    assert result.returncode == 0 and not cache_dir.exists()


def test_parallel_fix_writes_what_a_serial_fix_writes(write, tmp_path):
    from cuda2rocm.fixer import fix_paths

    for name in ("a", "b"):
        for i in range(30):
            write(
                f"{name}/m{i}.py", BAD + f"with torch.cuda.amp.autocast({i % 2 == 0}):\n    pass\n"
            )
    serial = fix_paths(Linter(RULES), [tmp_path / "a"], jobs=1)
    parallel = fix_paths(Linter(RULES), [tmp_path / "b"], jobs=2)
    assert len(serial.outcomes) == len(parallel.outcomes) == 30
    for i in range(30):
        assert (tmp_path / "a" / f"m{i}.py").read_text() == (
            tmp_path / "b" / f"m{i}.py"
        ).read_text()
    assert 'torch.amp.autocast("cuda", enabled=True)' in (tmp_path / "a" / "m0.py").read_text()


def test_fix_reuses_the_cache_and_parses_only_files_with_a_fix(write, tmp_path, monkeypatch):
    """After a warm lint, `fix --check` re-parses only the files whose cached findings have a
    fix to apply; a file with findings but nothing to fix is not parsed again."""
    from click.testing import CliRunner

    from cuda2rocm.cli import main

    fixable = write("pkg/fixable.py", "import torch\nwith torch.cuda.amp.autocast():\n    pass\n")
    write("pkg/report_only.py", "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    write("pkg/clean.py", "import torch\nx = torch.cuda.is_available()\n")
    cache_dir = str(tmp_path / "cache")
    args = ["--cache-dir", cache_dir, "-j", "1", str(tmp_path / "pkg")]
    lint = CliRunner().invoke(main, ["lint", "--format", "concise", *args])
    assert "tf32-flags" in lint.output and "amp-deprecated-api" in lint.output
    parsed: list[str] = []
    original = Linter.lint_source

    def counting(self, source, rules=None):
        parsed.append(Path(source.path).name)
        return original(self, source, rules)

    monkeypatch.setattr(Linter, "lint_source", counting)
    check = CliRunner().invoke(main, ["fix", "--check", *args])
    assert check.exit_code == 1, check.output
    assert parsed == []  # the lint kept the fix outcome of the default (safe) fixes
    # with unsafe fixes too, the outcome is not kept: only the file with a fix is parsed
    unsafe = CliRunner().invoke(main, ["fix", "--check", "--unsafe-fixes", *args])
    assert unsafe.exit_code == 1, unsafe.output
    assert set(parsed) == {"fixable.py"}
    assert fixable.read_text().startswith("import torch\nwith torch.cuda.amp.autocast()")
    parsed.clear()
    no_cache = CliRunner().invoke(
        main, ["fix", "--check", "--no-cache", "-j", "1", str(tmp_path / "pkg")]
    )
    assert no_cache.exit_code == 1
    assert "report_only.py" in parsed  # without the cache every candidate file is parsed
