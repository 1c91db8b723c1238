"""warp-queue-ladder: a `k <= 32` rung that instantiates a per-warp queue of 32 entries.

Warp-wide k-selection (faiss's WarpSelect/BlockSelect and code derived from it) spreads a warp
queue of N entries over the lanes, N / warp-size per lane, so N must be a multiple of the warp
size. Dispatch ladders pick N from k (`k <= 32` -> 32, `k <= 64` -> 64, ...); on a 64-lane
wavefront the 32 rung has no valid layout (0 entries per lane). The rung is read as text, so
ladders inside `#define` bodies count too. The 32 must be passed where the callee's own
parameter is named for a warp (`NUM_WARP_Q`, `NumWarpQ`) or the callee is (`WARP_SELECT_CALL`):
other ladders (tile sizes, unrolled loops) are not warp queues.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends.cpp import CppRule, hip_excluded

_RUNG = re.compile(r"\bif\s*\(\s*(\w+)\s*<=\s*32\s*\)\s*\{")
_CALLEE = re.compile(r"\b([A-Za-z_]\w*)\s*(<|\()")
_WARP = re.compile(r"warp", re.I)


def _arguments(text: str, start: int, opening: str) -> list[str]:
    """Top-level comma-separated arguments from just after `opening` at `start`."""
    closing = ">" if opening == "<" else ")"
    opens, closes = ("(<[{", ")>]}") if opening == "<" else ("([{", ")]}")
    depth, args, current = 0, [], []
    for ch in text[start:]:
        if ch in opens:
            depth += 1
        elif ch in closes:
            if depth == 0:
                if ch == closing:
                    args.append("".join(current).strip(" \\\n\t"))
                    return args
                return []
            depth -= 1
        elif ch == "," and depth == 0:
            args.append("".join(current).strip(" \\\n\t"))
            current = []
            continue
        current.append(ch)
    return []


def _parameters(text: str, name: str) -> list[str] | None:
    """Parameter names of `#define name(...)` or of the template that declares `name`."""
    macro = re.search(rf"#\s*define\s+{re.escape(name)}\(([^)]*)\)", text)
    if macro:
        return [p.strip() for p in macro.group(1).split(",")]
    template = re.search(rf"template\s*<([^<>]*)>[^;{{}}]*?\b{re.escape(name)}\s*\(", text, re.S)
    if template:
        return [p.split()[-1].split("=")[0] for p in template.group(1).split(",") if p.split()]
    return None


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        text = view.source.text
        for rung in _RUNG.finditer(text):
            var = rung.group(1)
            ladder = text[rung.end() : rung.end() + 800]
            if not re.search(rf"\b{re.escape(var)}\s*<=\s*64\b", ladder):
                continue  # not a power-of-two ladder continuing past one 32-lane warp
            found = self._warp_queue(text, rung.end())
            if found is None:
                continue
            name, named, call_end = found
            line_end = text.find("\n", call_end)
            span = (rung.start(), len(text) if line_end < 0 else line_end)
            if hip_excluded(view, span):
                continue
            what = f"`{named}`" if named else f"`{name}`'s warp queue"
            self.report(
                span,
                f"`{var} <= 32` dispatches a warp queue of 32 entries ({what}): warp-wide "
                "k-selection spreads the queue over the lanes (entries / warp size per lane), so "
                "32 entries have no layout on AMD CDNA's 64-lane wavefronts; take this rung only "
                "where the warp size is 32 (e.g. `&& warpSize == 32` queried on the host) and "
                "let ROCm use the 64 rung",
            )

    def _warp_queue(self, text: str, start: int) -> tuple[str, str, int] | None:
        """In the rung's first statement, a call or template instantiation (nested ones too:
        `launch(scan<128, 32, 2>)`) that passes 32 to a warp-named parameter or callee:
        (callee, parameter name or "", end of the match)."""
        stop = text.find(";", start)
        statement = text[start : len(text) if stop < 0 else stop]
        for call in _CALLEE.finditer(statement):
            name = call.group(1)
            args = _arguments(statement, call.end(), call.group(2))
            at = [i for i, a in enumerate(args) if a == "32"]
            if not at:
                continue
            params = _parameters(text, name) or []
            named = [params[i] for i in at if i < len(params) and _WARP.search(params[i])]
            if named or _WARP.search(name):
                return name, named[0] if named else "", start + call.end()
        return None
