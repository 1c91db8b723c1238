"""Write docs/rules.md from the rule catalogue (tests check it is up to date)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cuda2rocm.catalogue import load_catalogue  # noqa: E402
from cuda2rocm.explain import render_markdown  # noqa: E402
from cuda2rocm.model import STEPS  # noqa: E402


def render() -> str:
    rules = load_catalogue()
    out = [
        "# cuda2rocm rules",
        "",
        "Generated from `rules/*.toml` by `python tools/gen_rule_docs.py`; do not edit by hand.",
        "",
        "| code | id | step | severity | fix | default |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules:
        anchor = r.id
        out.append(
            f"| {r.code} | [{r.id}](#{anchor}-{r.code.lower()}) | {r.step} "
            f"{STEPS.get(r.step, 'general')} | {r.severity.value} | {r.fix} | "
            f"{'on' if r.default else 'opt-in'} |"
        )
    out.append("")
    for r in rules:
        out.append(render_markdown(r, level=2))
    return "\n".join(out)


if __name__ == "__main__":
    (ROOT / "docs" / "rules.md").write_text(render(), encoding="utf-8")
