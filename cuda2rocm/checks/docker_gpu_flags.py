"""docker-gpu-flags: `docker run`/`create` options that request GPUs through the NVIDIA runtime
(`--gpus`, `--runtime=nvidia`) or grant privileges no ROCm document asks for (`--cap-add
SYS_ADMIN`). Options and messages are the rule's table; `--opt value` and `--opt=value` both
count.
"""

from __future__ import annotations

from cuda2rocm.frontends.text import TextRule

_ENGINES = {"docker", "podman", "nerdctl"}
_RUN = {"run", "create"}


class Rule(TextRule):
    def check(self) -> None:
        options: list[dict] = self.spec.tables.get("options", [])
        for cmd in self.view.commands:
            if cmd.name not in _ENGINES:
                continue
            words = list(cmd.words[1:])
            if words and words[0].value == "container":
                words = words[1:]
            if not words or words[0].value not in _RUN:
                continue
            args = words[1:]
            for i, w in enumerate(args):
                name, eq, value = w.value.partition("=")
                end = w.end
                if not eq and i + 1 < len(args) and not args[i + 1].raw.startswith("-"):
                    value, end = args[i + 1].value, args[i + 1].end
                for opt in options:
                    if name != opt["option"]:
                        continue
                    wanted = opt.get("value")
                    if wanted is not None and value.lower() != wanted.lower():
                        continue
                    if wanted is None and not opt.get("takes_value"):
                        end = w.end
                    shown = " ".join(self.source.text[w.start : end].split())
                    self.report(
                        w.start, end, f"{shown}: {opt['message']}", severity=opt.get("severity")
                    )
