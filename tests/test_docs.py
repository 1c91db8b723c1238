"""The README's commands and the generated rule docs stay true."""

from __future__ import annotations

import importlib.util
import re

from conftest import ROOT


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)\n```", readme, re.S).group(1).splitlines()
    assert len(block) == 2 and "lint examples/" in block[0] and "pytest" in block[1]
    assert block[1] in (ROOT / ".ci" / "run").read_text()


def test_rule_docs_are_generated_from_the_catalogue():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "tools" / "gen_rule_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    current = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == gen.render(), "run: python tools/gen_rule_docs.py"
