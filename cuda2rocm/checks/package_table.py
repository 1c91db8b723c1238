"""Generic check for table-driven requirement rules (cuda-only-packages, rocm-variant-packages).

The rule's TOML holds the facts: `[tables.packages]` maps a (PEP 503-normalised) distribution
name to what to tell the user, `[[tables.patterns]]` does the same for name families
(`nvidia-cudnn-cu12`, `cupy-cuda12x`). Requirements come from requirement files,
`pyproject.toml` dependency lists, and `pip install` lines in shell scripts and Dockerfiles.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends.text import TextRule, normalize


class Rule(TextRule):
    def check(self) -> None:
        tables = self.spec.tables
        packages = {normalize(k): v for k, v in tables.get("packages", {}).items()}
        patterns = [(re.compile(p["regex"]), p["message"]) for p in tables.get("patterns", [])]
        for req in self.view.requirements():
            message = packages.get(req.key)
            if message is None:
                message = next((m for rx, m in patterns if rx.fullmatch(req.key)), None)
            if message is not None:
                self.report(req.start, req.end, f"{req.name}: {message}")
