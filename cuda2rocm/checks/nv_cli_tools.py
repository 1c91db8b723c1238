"""nv-cli-tools: NVIDIA command-line tools run by shell scripts and Dockerfile RUN lines.

Only commands count (the program word of a simple command, also inside `$(...)`), not
mentions in strings or comments. A script that also runs the tool's ROCm counterpart (a vendor
switch) is not reported for that tool. The tools and their counterparts are the rule's table.
"""

from __future__ import annotations

from cuda2rocm.frontends.text import TextRule


class Rule(TextRule):
    def check(self) -> None:
        tools: dict[str, dict] = self.spec.tables.get("tools", {})
        used = {cmd.name for cmd in self.view.commands}
        for cmd in self.view.commands:
            tool = tools.get(cmd.name)
            if tool is None:
                continue
            if used & set(tool.get("counterparts", [])):
                continue  # the script already switches between vendors
            word = cmd.words[0]
            self.report(word.start, word.end, f"{cmd.name}: {tool['message']}")
