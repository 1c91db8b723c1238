"""Project configuration: `[tool.cuda2rocm]` in pyproject.toml, or a cuda2rocm.toml.

Resolved per file, as ruff does: each file uses the nearest configuration above it, so the
findings for a file never depend on what else is on the command line; `--config FILE` overrides
for every file. `extend = "../pyproject.toml"` inherits another file's settings. Paths and
patterns in a file are relative to that file's folder, also when another file extends it. Every
key is validated: an unknown key or a wrong type is an error naming the file, the key and the
type.
"""

from __future__ import annotations

import os
import sys
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
SEVERITIES = ("error", "warning", "info")
TARGETS = ("portable", "hip")
#: key -> (attribute, expected type description)
KEYS: dict[str, tuple[str, str]] = {
    "extend": ("extend", "a path (string) to another configuration file"),
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
    "fail-on": ("fail_on", '"error", "warning" or "info"'),
    "baseline": ("baseline", "a path (string) to a baseline file"),
    "torch-built": ("torch_built", _LIST),
    "cuda-only": ("cuda_only", _LIST),
    "rocm-version": ("rocm_version", 'a ROCm release "MAJOR.MINOR" (or "OLDEST..NEWEST")'),
    "offload-arch": ("offload_arch", 'a list of gfx targets (e.g. ["gfx942", "gfx1100"])'),
    "compile-commands": ("compile_commands", "a path (string) to a compile_commands.json"),
}
#: Keys whose values are paths or patterns, read relative to the file that sets them.
_ANCHORED = (
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "baseline",
    "torch-built",
    "cuda-only",
    "compile-commands",
)


@dataclass(frozen=True)
class Layer:
    """One source of rule selection (a configuration file, or the command line), applied in
    order as ruff does: a `select` starts over, then `extend-select` adds, then `ignore` removes."""

    origin: str
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class Patterns:
    """Gitignore-style patterns, matched relative to `base` (the folder of the file that
    sets them)."""

    base: Path
    patterns: tuple[str, ...]
    spec: pathspec.GitIgnoreSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", pathspec.GitIgnoreSpec.from_lines(self.patterns))

    def match(self, path: str | Path) -> bool:
        rel = _relative(path, self.base)
        return rel is not None and self.spec.match_file(rel)


@dataclass
class Config:
    path: Path | None = None
    root: Path = field(default_factory=Path.cwd)
    #: Rule selection, outermost (extended) file first.
    layers: list[Layer] = field(default_factory=list)
    exclude: list[Patterns] = field(default_factory=list)
    #: (patterns, selectors): rules off for files matching the patterns.
    per_file_ignores: list[tuple[Patterns, tuple[str, ...]]] = field(default_factory=list)
    target: str = "portable"
    unsafe_fixes: bool = False
    max_file_size: int = DEFAULT_MAX_BYTES
    #: selector -> (severity, file that set it)
    severity: dict[str, tuple[str, str]] = field(default_factory=dict)
    fail_on: str = "warning"
    baseline: Path | None = None
    #: C++ sources that torch's cpp_extension builds (hipifies), beyond those found on its own.
    torch_built: list[Patterns] = field(default_factory=list)
    #: Paths the project keeps NVIDIA-only by decision: their findings are guarded.
    cuda_only: list[Patterns] = field(default_factory=list)
    #: The oldest ROCm release the port supports and its GPUs (cuda2rocm.targets); None
    #: takes the default.
    rocm_version: str | None = None
    offload_arch: list[str] | None = None
    #: A ROCm build's compile_commands.json (context.compile_db), or None.
    compile_commands: Path | None = None
    #: key -> the file that set it (for `--show-settings`).
    origins: dict[str, str] = field(default_factory=dict)

    def excluded(self, path: str | Path) -> bool:
        return any(p.match(path) for p in self.exclude)

    def torch_built_for(self, path: str) -> bool:
        return any(p.match(path) for p in self.torch_built)

    def cuda_only_for(self, path: str) -> str:
        """The configuration file that declares `path` CUDA-only, or ""."""
        if any(p.match(path) for p in self.cuda_only):
            return self.origins.get("cuda-only", str(self.path or "the configuration"))
        return ""

    def targets(self):
        """The resolved cuda2rocm.targets.Targets (validated when the file was read)."""
        from cuda2rocm.targets import Targets

        return Targets.parse(self.rocm_version, self.offload_arch)

    def baseline_path(self) -> Path | None:
        return self.baseline

    def ignored_for(self, path: str) -> list[str]:
        """Selectors switched off for `path` by per-file-ignores."""
        return [
            s
            for patterns, selectors in self.per_file_ignores
            if patterns.match(path)
            for s in selectors
        ]

    def settings(self) -> dict[str, object]:
        """The resolved settings as plain values (for `--show-settings` and the cache key)."""
        return {
            "config": str(self.path) if self.path else None,
            "select": [
                {
                    "origin": la.origin,
                    "select": list(la.select),
                    "extend-select": list(la.extend_select),
                    "ignore": list(la.ignore),
                }
                for la in self.layers
            ],
            "exclude": [{"base": str(p.base), "patterns": list(p.patterns)} for p in self.exclude],
            "per-file-ignores": [
                {"base": str(p.base), "patterns": list(p.patterns), "rules": list(s)}
                for p, s in self.per_file_ignores
            ],
            "target": self.target,
            "unsafe-fixes": self.unsafe_fixes,
            "max-file-size": self.max_file_size,
            "severity": {k: v for k, (v, _) in sorted(self.severity.items())},
            "fail-on": self.fail_on,
            "baseline": str(self.baseline) if self.baseline else None,
            "compile-commands": str(self.compile_commands) if self.compile_commands else None,
            "torch-built": [
                {"base": str(p.base), "patterns": list(p.patterns)} for p in self.torch_built
            ],
            "cuda-only": [
                {"base": str(p.base), "patterns": list(p.patterns)} for p in self.cuda_only
            ],
            **self.targets().settings(),
        }


def _relative(path: str | Path, base: Path) -> str | None:
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(base)).as_posix()
    except ValueError:
        return None


def expected_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


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
    elif key == "fail-on":
        ok = value in SEVERITIES
    elif key in ("baseline", "extend", "compile-commands"):
        ok = isinstance(value, str) and bool(value)
    elif key in ("rocm-version", "offload-arch"):
        from cuda2rocm.targets import TargetError, Targets

        ok = isinstance(value, str) if key == "rocm-version" else expected_list(value)
        if ok:
            try:
                Targets.parse(*((value, None) if key == "rocm-version" else (None, value)))
            except TargetError as exc:
                raise ConfigError(f"{where}: '{key}': {exc}") from exc
    if not ok:
        raise ConfigError(f"{where}: '{key}' must be {expected}, got {value!r}")
    return value


def _read(path: Path) -> dict:
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
    for key, value in data.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(f"{path}: unknown key '{key}' in cuda2rocm settings (known: {known})")
        _check(str(path), key, value)
    return data


def load_file(path: Path, _seen: tuple[Path, ...] = ()) -> Config:
    """One configuration file, with what it extends applied first."""
    path = Path(os.path.abspath(path))
    if path in _seen:
        chain = " -> ".join(str(p) for p in (*_seen, path))
        raise ConfigError(f"{path}: 'extend' makes a cycle ({chain})")
    data = _read(path)
    if "extend" in data:
        parent = path.parent / os.path.expanduser(data["extend"])
        if not parent.is_file():
            raise ConfigError(f"{path}: 'extend' names {parent}, which does not exist")
        config = load_file(parent, (*_seen, path))
    else:
        config = Config()
    config.path, config.root = path, path.parent
    _overlay(config, data, path)
    return config


def _overlay(config: Config, data: dict, path: Path) -> None:
    """Apply one file's keys over what it extends: scalars replace, `extend-*` keys add."""
    base, where = path.parent, str(path)
    if any(k in data for k in ("select", "extend-select", "ignore")):
        config.layers.append(
            Layer(
                where,
                tuple(data.get("select", ())),
                tuple(data.get("extend-select", ())),
                tuple(data.get("ignore", ())),
            )
        )
    if "exclude" in data:
        config.exclude = [Patterns(base, tuple(data["exclude"]))]
    if "extend-exclude" in data:
        config.exclude.append(Patterns(base, tuple(data["extend-exclude"])))
    if "per-file-ignores" in data:
        config.per_file_ignores = [
            (Patterns(base, (pattern,)), tuple(selectors))
            for pattern, selectors in data["per-file-ignores"].items()
        ]
    if "torch-built" in data:
        config.torch_built = [Patterns(base, tuple(data["torch-built"]))]
    if "cuda-only" in data:
        config.cuda_only = [Patterns(base, tuple(data["cuda-only"]))]
    if "severity" in data:
        config.severity.update({k: (v, where) for k, v in data["severity"].items()})
    if "baseline" in data:
        config.baseline = base / data["baseline"]
    if "compile-commands" in data:
        config.compile_commands = base / data["compile-commands"]
    for key in (
        "target",
        "unsafe-fixes",
        "max-file-size",
        "fail-on",
        "rocm-version",
        "offload-arch",
    ):
        if key in data:
            setattr(config, KEYS[key][0], data[key])
    for key in data:
        if key != "extend":
            config.origins[key] = where


def _declares(pyproject: Path) -> bool:
    """Whether a pyproject.toml has a [tool.cuda2rocm] table (one without it is passed over)."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if "tool.cuda2rocm" in text:
        return True  # load_file reports it if it is not valid TOML
    try:
        return "cuda2rocm" in tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return False


def config_in(directory: Path) -> Path | None:
    """The configuration file of `directory` itself: cuda2rocm.toml wins over pyproject.toml."""
    own = directory / "cuda2rocm.toml"
    if own.is_file():
        return own
    pyproject = directory / "pyproject.toml"
    if pyproject.is_file() and _declares(pyproject):
        return pyproject
    return None


def find_config(start: str | Path) -> Path | None:
    """The nearest configuration at or above `start` (a file's folder, or a folder)."""
    start = Path(os.path.abspath(start))
    if start.is_file() or not start.exists():
        start = start.parent
    for directory in (start, *start.parents):
        found = config_in(directory)
        if found is not None:
            return found
    return None


class Resolver:
    """The configuration of each file: `--config` for all, else the nearest one above it.

    Lookups are cached per folder and per file, so a tree walk stats each folder once.
    """

    def __init__(self, explicit: str | None = None) -> None:
        self.explicit = load_file(Path(explicit)) if explicit else None
        self._by_dir: dict[Path, Config] = {}
        self._by_file: dict[Path, Config] = {}
        self._default: Config | None = None

    def for_path(self, path: str | Path) -> Config:
        """The configuration that applies to a file (or to files directly in a folder)."""
        if self.explicit is not None:
            return self.explicit
        absolute = Path(os.path.abspath(path))
        directory = absolute if absolute.is_dir() else absolute.parent
        return self._for_dir(directory)

    def _for_dir(self, directory: Path) -> Config:
        if directory in self._by_dir:
            return self._by_dir[directory]
        found = config_in(directory)
        if found is not None:
            config = self._by_file.get(found) or load_file(found)
            self._by_file[found] = config
        elif directory.parent != directory:
            config = self._for_dir(directory.parent)
        else:
            config = self._default = self._default or Config()
        self._by_dir[directory] = config
        return config


def load_config(paths: list[str] | tuple[str, ...] = (), explicit: str | None = None) -> Config:
    """The configuration of the first path (or the current folder): for commands that act on
    one place, such as `clean`."""
    if explicit:
        return load_file(Path(explicit))
    return Resolver().for_path(paths[0] if paths else Path.cwd())
