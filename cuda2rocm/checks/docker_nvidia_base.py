"""docker-nvidia-base: Dockerfiles built on NVIDIA's CUDA images, or configured for the NVIDIA
container runtime.

`FROM` images are matched after substituting `ARG` defaults declared earlier in the file
(`ARG BASE=nvidia/cuda:12.1.1-devel-ubuntu22.04` / `FROM ${BASE}`). The image patterns and
the variable names are the rule's tables.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends.text import TextRule, shell_words

_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}?")


class Rule(TextRule):
    def check(self) -> None:
        tables = self.spec.tables
        images = [(re.compile(p["regex"]), p["message"]) for p in tables.get("images", [])]
        env = tables.get("env", {})
        defaults: dict[str, str] = {}
        for a in self.view.assignments:
            if a.kind in ("env", "env-legacy") and a.name in env:
                self.report(a.start, a.end, f"{a.name}: {env[a.name]}")
        for keyword, _, line, args in self.view.instructions:
            if keyword == "ARG":
                for a in self.view.assignments:
                    if a.kind == "arg" and line.start <= a.start < line.end and a.raw_value:
                        defaults[a.name] = a.value
                continue
            if keyword != "FROM":
                continue
            words = [
                w
                for w in shell_words(self.view.masked, args, line.end)[0]
                if not isinstance(w, str)
            ]
            words = [w for w in words if not w.raw.startswith("--")]
            if not words:
                continue
            image_word = words[0]
            image = _VAR.sub(lambda m: defaults.get(m.group(1), m.group(2) or ""), image_word.value)
            for rx, message in images:
                if rx.match(image):
                    shown = image if image == image_word.value else f"{image_word.value} = {image}"
                    self.report(image_word.start, image_word.end, f"{shown}: {message}")
                    break
