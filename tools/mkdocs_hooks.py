"""mkdocs hooks (mkdocs.yml `hooks:`): the rule pages, generated from `rules/*.toml` at build
time, and every page under docs/ that the nav does not name, appended to it, so a new page
added by anyone appears on the site without an edit here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.structure.files import File, Files

_GEN = Path(__file__).with_name("gen_rule_docs.py")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_rule_docs", _GEN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_files(files: Files, config) -> Files:
    for name, text in _generator().pages().items():
        files.append(File.generated(config, name, content=text))
    changelog = (_GEN.parent.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "changelog.md", content=changelog))
    return files


def on_config(config):
    """The nav's "Rules" section lists every generated rule page; pages under docs/ that the
    nav leaves out go at its end, under "More"."""
    nav = config.get("nav") or []
    rules = ["rules/index.md", *(f"rules/{name}" for name in _generator().rule_names())]
    nav = [{"Rules": rules} if isinstance(i, dict) and "Rules" in i else i for i in nav]
    named: set[str] = set()

    def walk(items) -> None:
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                walk(value)
            elif isinstance(value, str):
                named.add(value)

    walk(nav)
    docs = Path(config["docs_dir"])
    extra = sorted(
        str(p.relative_to(docs))
        for p in docs.rglob("*.md")
        if str(p.relative_to(docs)) not in named and "rules" not in p.relative_to(docs).parts
    )
    if extra:
        nav.append({"More": extra})
    config["nav"] = nav
    return config
