"""Project configuration: `[tool.cuda2rocm]` in pyproject.toml, or a cuda2rocm.toml.

Found by walking up from the linted paths, like ruff; `--config FILE` overrides. Every key is
validated: an unknown key or a wrong type is an error naming the file, the key and the type.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from cuda2rocm.sources import DEFAULT_MAX_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    pass


_LIST = "a list of strings"
#: key -> (attribute, expected type description)
KEYS: dict[str, tuple[str, str]] = {
    "select": ("select", _LIST),
    "extend-select": ("extend_select", _LIST),
    "ignore": ("ignore", _LIST),
    "exclude": ("exclude", _LIST),
    "extend-exclude": ("extend_exclude", _LIST),
    "per-file-ignores": ("per_file_ignores", "a table of glob = list of strings"),
    "target": ("target", '"portable" or "hip"'),
    "unsafe-fixes": ("unsafe_fixes", "a boolean"),
    "max-file-size": ("max_file_size", "a positive integer (bytes)"),
    "severity": ("severity", 'a table of rule = "error" | "warning" | "info"'),
    "baseline": ("baseline", "a path (string) to a baseline file"),
    "torch-built": ("torch_built", _LIST),
}
SEVERITIES = ("error", "warning", "info")
TARGETS = ("portable", "hip")


@dataclass
class Config:
    path: Path | None = None
    root: Path = field(default_factory=Path.cwd)
    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    target: str = "portable"
    unsafe_fixes: bool = False
    max_file_size: int = DEFAULT_MAX_BYTES
    severity: dict[str, str] = field(default_factory=dict)
    baseline: str | None = None
    #: Gitignore-style patterns of C++ sources that torch's cpp_extension builds (hipifies).
    torch_built: list[str] = field(default_factory=list)

    def torch_built_for(self, path: str) -> bool:
        rel = _relative(path, self.root)
        return pathspec.GitIgnoreSpec.from_lines(self.torch_built).match_file(rel)

    def baseline_path(self) -> Path | None:
        """The configured baseline, relative to the config file's directory."""
        return (self.root / self.baseline) if self.baseline else None

    def ignored_for(self, path: str) -> list[str]:
        """Selectors ignored for `path` (relative to the config's directory) by per-file-ignores."""
        out: list[str] = []
        rel = _relative(path, self.root)
        for pattern, selectors in self.per_file_ignores.items():
            if pathspec.GitIgnoreSpec.from_lines([pattern]).match_file(rel):
                out += selectors
        return out


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _check(where: str, key: str, value: object) -> object:
    expected = KEYS[key][1]
    ok = True
    if expected == _LIST:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    elif key == "per-file-ignores":
        ok = isinstance(value, dict) and all(
            isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value.values()
        )
    elif key == "target":
        ok = value in TARGETS
    elif key == "unsafe-fixes":
        ok = isinstance(value, bool)
    elif key == "max-file-size":
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    elif key == "severity":
        ok = isinstance(value, dict) and all(v in SEVERITIES for v in value.values())
    elif key == "baseline":
        ok = isinstance(value, str) and bool(value)
    if not ok:
        raise ConfigError(f"{where}: '{key}' must be {expected}, got {value!r}")
    return value


def parse_config(data: dict, path: Path) -> Config:
    config = Config(path=path, root=path.parent)
    for key, value in data.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(f"{path}: unknown key '{key}' in cuda2rocm settings (known: {known})")
        setattr(config, KEYS[key][0], _check(str(path), key, value))
    return config


def load_file(path: Path) -> Config:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("cuda2rocm", {})
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: [tool.cuda2rocm] must be a table")
    return parse_config(data, path)


def find_config(paths: Sequence[str]) -> Path | None:
    """The nearest cuda2rocm.toml or pyproject.toml with [tool.cuda2rocm], walking up."""
    start = Path(paths[0]) if paths else Path.cwd()
    start = start.resolve()
    if start.is_file() or not start.exists():
        start = start.parent
    for directory in (start, *start.parents):
        own = directory / "cuda2rocm.toml"
        if own.is_file():
            return own
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            try:
                text = pyproject.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "tool.cuda2rocm" in text:
                return pyproject  # load_file reports it if it is not valid TOML
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                continue
            if "cuda2rocm" in data.get("tool", {}):
                return pyproject
    return None


def load_config(paths: Sequence[str], explicit: str | None = None) -> Config:
    if explicit:
        return load_file(Path(explicit))
    found = find_config(paths)
    return load_file(found) if found else Config()
