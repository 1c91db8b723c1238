"""One-line forms of findings, derived in the reporting layer from each check's full message.

Checks write one full message (what is wrong on ROCm; what to do), often a paragraph. A report
that is read first needs one line per finding (ruff's median is ~43 characters), so the short
form is derived here, never hand-written per check: the message's first clause (up to the first
top-level `; `), else the longest run of whole clauses that fits, else whole words with an
ellipsis. "Top-level" means outside backticks, quotes and brackets, so `std::min({a, b}); ...`
is never cut inside the code it quotes. The full message stays available: `help` in JSON,
`cuda2rocm explain RULE` for the rule's explanation, and the editor's hover.
"""

from __future__ import annotations

#: The longest short line (characters), as ruff-style one-liners go.
LIMIT = 100
_OPEN = {"(": ")", "[": "]", "{": "}"}
_QUOTES = {"`", '"'}
#: Where a clause may end, best first: the remedy after `;`, a dash, then a consequence.
_STRONG = ("; ", " — ", " - ")
_WEAK = (", so ", ", which ", ", but ", ": ", ", ")


def _top_level(message: str) -> list[bool]:
    """For each character, whether it lies outside quotes, backticks and brackets."""
    out: list[bool] = []
    stack: list[str] = []
    quote = ""
    for c in message:
        top = not stack and not quote
        if quote:
            if c == quote:
                quote = ""
        elif c in _QUOTES:
            quote = c
        elif c in _OPEN:
            stack.append(_OPEN[c])
        elif stack and c == stack[-1]:
            stack.pop()
        out.append(top and not quote and not stack)
    return out


def _cuts(message: str, seps: tuple[str, ...], top: list[bool]) -> list[int]:
    found = []
    for sep in seps:
        start = message.find(sep)
        while start > 0:
            if top[start]:
                found.append(start)
            start = message.find(sep, start + 1)
    return sorted(found)


def short(message: str, limit: int = LIMIT) -> str:
    """The message's one-line form (at most `limit` characters)."""
    text = " ".join(message.split())
    if len(text) <= limit:
        return text
    top = _top_level(text)
    strong = _cuts(text, _STRONG, top)
    if strong and 24 <= strong[0] <= limit:
        return text[: strong[0]].rstrip(" .,:")
    head = text[: strong[0]] if strong else text
    if len(head) <= limit:
        return head.rstrip(" .,:")
    weak = [i for i in _cuts(head, _WEAK, top) if limit * 45 // 100 <= i <= limit]
    if weak:
        return head[: weak[-1]].rstrip(" .,:")
    spaces = [i for i in range(limit - 1) if head[i] == " "]
    outside = [i for i in spaces if top[i] and i >= limit * 45 // 100]
    cut = outside[-1] if outside else spaces[-1] if spaces else limit - 1
    return head[:cut].rstrip(" .,:;(") + "…"
