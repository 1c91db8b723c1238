"""The oldest torch a project says it supports: a fix must not need a newer one to be safe.

Read from the run's requirement files (`requirements*.txt`, `pyproject.toml`) and Python build
files (`setup.py` `install_requires`): every `torch` requirement with a lower bound (`>=`,
`==`, `~=`, `>`; PEP 440 "Version specifiers") gives one; the floor is the oldest of them. A
project that states none has no known floor (None): an API that needs a recent torch is then
not known to exist everywhere the project runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_REQUIREMENT = re.compile(
    rb"""(?<![\w.-])torch\s*(?:\[[^\]]*\])?\s*(?:>=|==|~=|>|===)\s*v?(\d+(?:\.\d+)*)""", re.I
)


def version(text: str) -> tuple[int, ...]:
    """`"2.4"` -> (2, 4)."""
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def torch_floor(files: Iterable[bytes]) -> tuple[int, ...] | None:
    """The oldest lower bound of `torch` the files require, or None when none states one."""
    found = [version(m.group(1).decode()) for data in files for m in _REQUIREMENT.finditer(data)]
    return min(found) if found else None
