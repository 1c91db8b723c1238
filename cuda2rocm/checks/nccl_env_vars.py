"""nccl-env-vars: NCCL/RCCL variables set in shell scripts and Dockerfiles that do nothing on
ROCm.

The variable table is not repeated here: it is rule `nccl-literal`'s `[tables.env]` (named by
this rule's `env_from`), so the Python and the shell forms share one dated, cited list.
"""

from __future__ import annotations

from cuda2rocm.catalogue import find_rule
from cuda2rocm.frontends.text import TextRule


class Rule(TextRule):
    def check(self) -> None:
        env: dict[str, str] = find_rule(self.spec.tables["env_from"]).tables.get("env", {})
        for a in self.view.assignments:
            if a.name in env:
                self.report(a.start, a.start + len(a.name), f"{a.name}: {env[a.name]}")
