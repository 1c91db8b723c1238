"""The rule pages of the docs site, one per rule, from the catalogue (`rules/*.toml`).

The site generates them at build time (`tools/mkdocs_hooks.py` calls `pages()`), so they are
never checked in and never stale. `python tools/gen_rule_docs.py [DIR]` writes the same pages
to DIR (default: site-rules/) to read them without mkdocs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cuda2rocm.catalogue import RuleSpec, load_catalogue  # noqa: E402
from cuda2rocm.explain import render_markdown  # noqa: E402
from cuda2rocm.model import STEPS  # noqa: E402

NOTE = "Generated from `rules/*.toml` when the site is built; edit the rule's TOML file."


# A reference into this repository (`README.md#reporting-a-bug`) is not a page of the site.
_REPO_LINK = re.compile(r"^- \[([^\]]+)\]\(((?![a-z][a-z0-9+.-]*:)[^)]+)\)$", re.M)


def rule_page(rule: RuleSpec) -> str:
    """One rule: what it finds and why, its fix, examples, references, and its source file."""
    text = _REPO_LINK.sub(r"- \1 (`\2` in this repository)", render_markdown(rule, level=1))
    return text + f"\n---\n\n*Source: `rules/{rule.id}.toml`. {NOTE}*\n"


def index_page(rules: tuple[RuleSpec, ...]) -> str:
    """The catalogue as one table, by porting step."""
    out = [
        "# Rules",
        "",
        "Each rule belongs to a step of the porting checklist (the hundreds digit of its code): "
        "1 device, 2 mixed precision, 3 distributed, 4 custom ops and extensions, 5 memory and "
        "data loading, 6 build and packaging, 7 environment; 0 is the tool's own. "
        "`cuda2rocm rules` and `cuda2rocm explain RULE` print the same from the command line.",
        "",
        f"*{NOTE}*",
        "",
        "| code | rule | step | severity | fix | default |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules:
        out.append(
            f"| {r.code} | [{r.id}]({r.id}.md) | {r.step} {STEPS.get(r.step, 'general')} | "
            f"{r.severity.value} | {r.fix} | {'on' if r.default else 'opt-in'} |"
        )
    return "\n".join(out) + "\n"


def pages() -> dict[str, str]:
    """Path under docs/ -> Markdown, for every generated page."""
    rules = load_catalogue()
    found = {"rules/index.md": index_page(rules)}
    found.update({f"rules/{r.id}.md": rule_page(r) for r in rules})
    return found


def rule_names() -> list[str]:
    """The generated rule pages' file names, in catalogue order (for the site's nav)."""
    return [f"{r.id}.md" for r in load_catalogue()]


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "site-rules"
    for name, text in pages().items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(pages())} pages under {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
