"""The values every front-end, rule, reporter and the fixer share."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    """error: breaks on ROCm; warning: wrong result or a trap; info: worth a look."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


class Safety(str, enum.Enum):
    """safe: unchanged on CUDA, correct on ROCm; unsafe: needs a human to look."""

    SAFE = "safe"
    UNSAFE = "unsafe"


#: The porting checklist; the hundreds digit of a rule code is the step number.
STEPS: dict[int, str] = {
    0: "general",
    1: "device",
    2: "mixed precision",
    3: "distributed",
    4: "custom ops and extensions",
    5: "memory and data loading",
    6: "build and packaging",
    7: "environment",
}


@dataclass(frozen=True, order=True)
class Edit:
    """Replace text[start:end] (character offsets into the decoded file) by `replacement`."""

    start: int
    end: int
    replacement: str
    #: The exact text this edit believes it replaces; the fixer refuses the fix when
    #: text[start:end] differs (None only for edits not yet migrated: see issue 14).
    original: str | None = None


@dataclass(frozen=True)
class Fix:
    safety: Safety
    edits: tuple[Edit, ...]
    description: str = ""

    def overlaps(self, other: Fix) -> bool:
        return any(
            (a.start < b.end and b.start < a.end) or (a.start == a.end == b.start == b.end)
            for a in self.edits
            for b in other.edits
        )


@dataclass(frozen=True)
class Position:
    """1-based line and column (columns count characters); end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Diagnostic:
    path: str
    rule: str
    code: str
    severity: Severity
    step: int
    position: Position
    message: str
    fix: Fix | None = None
    #: Free-form, rule-specific facts for reporters (e.g. the CUDA name matched).
    data: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: Why ROCm provably never compiles or runs this code ("" when it may): set by the context
    #: model (cuda2rocm/context/). A guarded finding is not reported, not fixed and does not
    #: count towards the exit code; `--show-guarded` lists it with this reason.
    guarded: str = ""

    @property
    def sort_key(self) -> tuple:
        p = self.position
        return (self.path, p.line, p.column, self.code, self.message)

    @classmethod
    def from_json(cls, data: dict) -> Diagnostic:
        """Inverse of `to_json` (used by the result cache)."""
        fix = None
        if data.get("fix"):
            f = data["fix"]
            edits = tuple(
                Edit(e["start"], e["end"], e["replacement"], e.get("original"))
                for e in f["edits"]
            )
            fix = Fix(Safety(f["safety"]), edits, f.get("description", ""))
        return cls(
            path=data["path"],
            rule=data["rule"],
            code=data["code"],
            severity=Severity(data["severity"]),
            step=data["step"],
            position=Position(data["line"], data["column"], data["end_line"], data["end_column"]),
            message=data["message"],
            fix=fix,
            guarded=data.get("guarded", ""),
        )

    def to_json(self) -> dict:
        p = self.position
        fix = None
        if self.fix is not None:
            fix = {
                "safety": self.fix.safety.value,
                "description": self.fix.description,
                "edits": [
                    {"start": e.start, "end": e.end, "replacement": e.replacement}
                    | ({"original": e.original} if e.original is not None else {})
                    for e in self.fix.edits
                ],
            }
        return {
            "path": self.path,
            "line": p.line,
            "column": p.column,
            "end_line": p.end_line,
            "end_column": p.end_column,
            "rule": self.rule,
            "code": self.code,
            "severity": self.severity.value,
            "step": self.step,
            "step_name": STEPS.get(self.step, "general"),
            "message": self.message,
            "fix": fix,
            **({"guarded": self.guarded} if self.guarded else {}),
        }
