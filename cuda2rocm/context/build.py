"""Build membership: which sources a project's build compiles only for CUDA, and which files
belong to another accelerator. Build files are read statically, never run.

- **setup.py / extension builders** (files that import `cpp_extension`): the file is walked by
  `python_paths` for ROCm and for CUDA; a path literal that sits in code dead on ROCm and live
  on CUDA (flash-attention's `if not SKIP_CUDA_BUILD and not IS_ROCM: ... sources=[...]`) names
  a CUDA-only source. Its folder is a *component* unless any path literal of code ROCm may run
  lies inside that folder (then only the listed files are). Only literals that exist on disk
  count.
- **Op builders**: a class whose `is_compatible()` is known False on ROCm and not on CUDA
  (`if self.is_rocm_pytorch(): return False`): the existing paths its `sources()` returns.
- **Build helpers**: a path joined onto a parameter (`csrc / "userbuffers" / "x.cu"`) is
  resolved through the string constants the function's callers pass (`CallSites`:
  TransformerEngine's setup.py calls `setup_pytorch_extension("transformer_engine/pytorch/csrc")`
  from build_tools/pytorch.py, which adds userbuffers/ only `if not rocm_build():`).
- **CMake**: `add_subdirectory(x)` and listed sources inside `if(NOT <switch>)`, or the `else()`
  of `if(<switch>)`, and (`cmake_dead_lines`, for findings in the CMake file itself) any
  command there. What a ROCm configure provably makes true:
  - a *ROCm switch* (`rocm_switch`): `USE_ROCM`, `USE_HIP`, `WITH_ROCM`, `WITH_HIP`, and any
    variable whose last word is ROCM or HIP (`FAISS_ENABLE_ROCM`, `GGML_HIP`), not negated
    (`NO_ROCM`) and not CMake's own (`CMAKE_HIP_...`). Such a switch exists to be turned on by
    the project's ROCm configure: faiss's INSTALL.md builds AMD GPU indexes with
    `-DFAISS_ENABLE_ROCM=ON`, torch's CMake uses `USE_ROCM`. False on a CUDA configure.
  - *companions* (`rocm_companions`): the constant `set()`s of the branch that sets a ROCm
    switch ON, project-wide (TransformerEngine's tests/cpp: `set(USE_ROCM ON)` `set(USE_CUDA
    OFF)` in its ROCm-detection branch makes `if(USE_CUDA)` in tests/cpp/util false). A
    variable two such branches set differently stays unknown; the CUDA pass knows none.
  - variables `set()` to a constant from these, in program order; `option()` never overrides
    them. Anything else (`EXISTS`, `VERSION_LESS`, `AND`/`OR`) is unknown, and code is guarded
    only when dead on ROCm and not on CUDA. A folder also added outside such a branch is not
    CUDA-only.
  - the tests before a vendor chain's one HIP branch (`cmake_branches`): a ROCm configure
    reaches that branch only past them.
- **Other accelerators**: SYCL sources (`.dp.cpp`, `#include <sycl/sycl.hpp>` or
  `<CL/sycl.hpp>`), Intel XPU (`xpu/`), Gaudi (`hpu/`) and Apple (`mps/`, `.metal`, `.mm`)
  folders and files are not CUDA code: a HIP build never compiles them.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from cuda2rocm.context.cmake_branches import rocm_false_tests
from cuda2rocm.context.cmake_flow import Flow, build_flow, source_components
from cuda2rocm.context.python_paths import CUDA, ROCM, ClassInfo, Helper, Paths, ProjectIndex

SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hip", ".inl")
ROCM_VARIABLES = frozenset({"USE_ROCM", "USE_HIP", "WITH_ROCM", "WITH_HIP"})
ACCELERATOR_DIRS = {"xpu": "Intel XPU", "hpu": "Intel Gaudi (HPU)", "mps": "Apple MPS"}
ACCELERATOR_SUFFIXES = {".dp.cpp": "SYCL", ".metal": "Apple Metal", ".mm": "Apple MPS"}
SYCL_INCLUDE = re.compile(r"^\s*#\s*include\s*<(?:sycl/sycl\.hpp|CL/sycl\.hpp)>", re.M)


@dataclass
class Component:
    """Sources the build compiles only for CUDA."""

    root: Path  # resolved folder (or file)
    build_file: str  # as displayed
    line: int
    why: str  # the build line that excludes it
    label: str = ""  # the folder as the build file names it
    files: frozenset[Path] = frozenset()  # when only these files (not the whole folder)
    #: Build helpers (Python modules) used only to build this component, outside its folder:
    #: resolved path -> the helper as displayed (`build_tools/paddle.py`).
    helpers: dict[Path, str] = field(default_factory=dict, kw_only=True)
    #: Why it is left out of ROCm builds when that is no porting decision: the option that
    #: lists it needs an NVIDIA-only package (`nvidia_options`); its summary is a note.
    dependency: str = field(default="", kw_only=True)

    def holds(self, resolved: Path) -> bool:
        if resolved in self.helpers:
            return True
        if self.files:
            return resolved in self.files
        return resolved == self.root or resolved.is_relative_to(self.root)

    @property
    def reason(self) -> str:
        return (
            f"in {self.label}, which {self.build_file} compiles only for CUDA ({self.why}); "
            "reported once as cuda-only-component"
        )

    def reason_for(self, resolved: Path) -> str:
        helper = self.helpers.get(resolved)
        if helper is None:
            return self.reason
        return (
            f"`{helper}` is used only to build {self.label}, which {self.build_file} compiles "
            f"only for CUDA ({self.why}); reported once as cuda-only-component"
        )


@dataclass
class Membership:
    components: list[Component] = field(default_factory=list)
    #: Variables the project's ROCm configure block sets (`rocm_companions`), run-wide.
    companions: dict[str, bool] = field(default_factory=dict)
    #: Options a ROCm build cannot turn on -> why (`nvidia_options`), run-wide.
    off: dict[str, str] = field(default_factory=dict)
    #: The run's CMake files (display, text without comments): where a variable is read.
    cmake_texts: list[tuple[str, str]] = field(default_factory=list)
    #: Vendor selectors and constants of the run's CMake files (`cmake_flow`).
    flow: Flow | None = None
    #: Sources no build of the run compiles (`context.unbuilt`): resolved path -> why.
    unbuilt: dict[Path, str] = field(default_factory=dict)

    def cmake_reason(self, text: str) -> Callable[[int], str]:
        """For a CMake file: line -> why a ROCm configure never runs it ("" when it may): a
        dead branch, or a `set()` of a variable read only in dead branches (`_read_dead`)."""
        regions = (
            cmake_dead_lines(text, self.companions, self.off, self.flow) if "if" in text else []
        )
        code = re.sub(r"#[^\n]*", "", text)
        lines = code.splitlines()
        # An `if(...)` line whose own branch a ROCm configure never takes: the condition only
        # selects that branch (FBGEMM's `if(FBGEMM_BUILD_VARIANT STREQUAL BUILD_VARIANT_CUDA)`
        # around sources its ROCm variant leaves out), so a finding about the branch there is
        # about code ROCm never runs.
        opens: dict[int, str] = {}
        if regions:
            starts = {start: why for start, _, why in regions}
            for _, argument, line in _commands(code, {"if", "elseif"}):
                why = starts.get(line + argument.count("\n") + 1)
                if why:
                    opens[line] = f"the condition of a branch {why.replace('under ', '', 1)}"

        def reason(line: int) -> str:
            why = next((why for start, end, why in regions if start <= line <= end), "")
            why = why or opens.get(line, "")
            if why or not 0 < line <= len(lines):
                return why
            m = _SET.match(lines[line - 1])
            return self._read_dead(m.group(1), code, line) if m else ""

        return reason

    def _read_dead(self, name: str, code: str, line: int) -> str:
        """Why the value `set()` at `line` never reaches a ROCm build: every other mention of
        the variable in the run's CMake files (faiss's `${CUDA_LIBS}` and its CUDA-branch
        `set(CUDA_LIBS ...)`) sits in code a ROCm configure never runs; "" otherwise (and for a
        CACHE / PARENT_SCOPE value, which leaves the file's scope)."""
        statement = code.splitlines()[line - 1]
        if re.search(r"\b(?:CACHE|PARENT_SCOPE)\b", statement):
            return ""
        word = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])")
        first = read = ""
        for display, other in self.cmake_texts or [("", code)]:
            hits = [other.count("\n", 0, m.start()) + 1 for m in word.finditer(other)]
            if other == code:
                hits = [h for h in hits if h != line]
            if not hits:
                continue
            regions = cmake_dead_lines(other, self.companions, self.off, self.flow)
            for hit in hits:
                why = next((w for s, e, w in regions if s <= hit <= e), "")
                if not why:
                    return ""
                where = f"{display or 'this file'}:{hit}, {why}"
                first = first or where
                if not read and "${" + name + "}" in other.splitlines()[hit - 1]:
                    read = where
        if not first:
            return ""
        return (
            f"`{name}` is set here but used only where a ROCm configure never goes "
            f"({read or first})"
        )

    def component(self, path: str) -> Component | None:
        if not self.components:
            return None
        resolved = Path(path).resolve()
        for c in self.components:
            if c.holds(resolved):
                return c
        return None

    def reason(self, path: str, text: str = "") -> str:
        other = accelerator(path, text)
        if other:
            return other
        c = self.component(path)
        if c is not None:
            return c.reason_for(Path(path).resolve())
        return self.unbuilt.get(Path(path).resolve(), "") if self.unbuilt else ""


def accelerator(path: str, text: str = "") -> str:
    """Why `path` is another accelerator's code, or ""."""
    pure = PurePath(path)
    name = pure.name
    for suffix, what in ACCELERATOR_SUFFIXES.items():
        if name.endswith(suffix):
            return f"a {what} source ({suffix}), not CUDA code: a HIP build never compiles it"
    for part in pure.parts[:-1]:
        if part in ACCELERATOR_DIRS:
            return (
                f"in a `{part}/` folder: {ACCELERATOR_DIRS[part]} code, not CUDA code; "
                "ROCm never compiles or runs it"
            )
    if text and "sycl" in text and SYCL_INCLUDE.search(text):
        return "includes the SYCL header: SYCL code, not CUDA code; a HIP build never compiles it"
    return ""


# -- setup.py and op builders ----------------------------------------------------------------
def _path_literals(tree: ast.AST) -> list[tuple[ast.AST, str, str | None]]:
    """Every string that may be a path, with the node that holds it and the name it is joined
    onto (`folder / "a" / "b"`, `os.path.join(folder, "a")`: "folder"; else None): constants,
    and `os.path.join("a", "b")` / `Path(x) / "a" / "b"` folded over their constant parts."""
    found: list[tuple[ast.AST, str, str | None]] = []
    folded: set[int] = set()
    for node in ast.walk(tree):
        parts = None
        head = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and id(node) not in folded:
            parts = _div_parts(node, folded)
            left = node
            while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Div):
                left = left.left
            head = left.id if isinstance(left, ast.Name) else None
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.path.join", "join"):
            parts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            folded.update(id(a) for a in node.args)
            parts = [p for p in parts if isinstance(p, str)]
            if node.args and isinstance(node.args[0], ast.Name):
                head = node.args[0].id
        if parts:
            found.append((node, "/".join(parts), head))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in folded
            and 0 < len(node.value) < 300
            and "\n" not in node.value
        ):
            found.append((node, node.value, None))
    return found


def _div_parts(node: ast.AST, folded: set[int]) -> list[str]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        folded.add(id(node))
        return _div_parts(node.left, folded) + _div_parts(node.right, folded)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        folded.add(id(node))
        return [node.value]
    return []


class CallSites:
    """Where a build helper's folder parameter comes from: TransformerEngine's setup.py calls
    `setup_pytorch_extension("transformer_engine/pytorch/csrc", ...)` (imported from
    build_tools/pytorch.py), which joins `csrc_source_files / "userbuffers" / ...`. For a
    function of one build file, the string constants its callers pass for one parameter, each
    resolved against the caller's folder (setup.py runs from its own folder). Callers are the
    file itself and Python files of the run that import the function by name from a module
    named like the file; a call with anything else for that argument resolves nothing."""

    def __init__(self, files: Iterable[tuple[Path, bytes]] = ()) -> None:
        self.files = [(p, d) for p, d in files]
        self._trees: dict[Path, ast.Module | None] = {}
        #: The questions asked of the files (`containing`, `naming`): a result derived with
        #: these callers depends on the other files only through the answers, so it holds
        #: while each question gets the same files (warm.FactsMemo checks that).
        self.asked: list[tuple[str, str]] = []

    def containing(self, token: str) -> list[tuple[Path, bytes]]:
        """The files whose text holds `token`."""
        self.asked.append(("contains", token))
        return self.answer(("contains", token))

    def naming(self, module: str) -> list[tuple[Path, bytes]]:
        """The files that name the dotted `module`: spelled out, or as `from parent import
        last`."""
        self.asked.append(("names", module))
        return self.answer(("names", module))

    def answer(self, question: tuple[str, str]) -> list[tuple[Path, bytes]]:
        """The files that answer `question` (not recorded)."""
        kind, what = question
        if kind == "contains":
            token = what.encode()
            return [(p, d) for p, d in self.files if token in d]
        parent, _, last = what.rpartition(".")
        via_parent = re.compile(
            rb"\bfrom\s+"
            + re.escape(parent.encode())
            + rb"\s+import\b[^\n]*\b"
            + re.escape(last.encode())
            + rb"\b"
        )
        name = what.encode()
        return [
            (p, d)
            for p, d in self.files
            if name in d or (parent and via_parent.search(d) is not None)
        ]

    def _tree(self, path: Path, data: bytes) -> ast.Module | None:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(data.decode("utf-8", "replace"))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._trees[path] = None
        return self._trees[path]

    def folders(self, defined_in: Path, function: str, index: int, keyword: str) -> list[Path]:
        out: list[Path] = []
        for path, data in self.containing(function):
            tree = self._tree(path, data)
            if tree is None:
                continue
            if path.resolve() != defined_in.resolve() and not _imports(tree, function, defined_in):
                continue
            for node in ast.walk(tree):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == function
                ):
                    continue
                arg = node.args[index] if index < len(node.args) else None
                arg = next((k.value for k in node.keywords if k.arg == keyword), arg)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.append(path.resolve().parent / arg.value)
        return out


def _imports(tree: ast.Module, function: str, defined_in: Path) -> bool:
    stem = defined_in.stem
    return any(
        isinstance(node, ast.ImportFrom)
        and (node.module or "").split(".")[-1] == stem
        and any(a.name == function for a in node.names)
        for node in ast.walk(tree)
    )


def _parameter_folders(
    tree: ast.Module, node: ast.AST, head: str, path: Path, callers: CallSites | None
) -> list[Path]:
    """The folders `head` may be when it is a parameter of the top-level function holding
    `node` (possibly rebound as `head = Path(head)`)."""
    if callers is None:
        return []
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        if not (function.lineno <= node.lineno <= (function.end_lineno or 0)):
            continue
        names = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
        if head not in names:
            return []
        for sub in ast.walk(function):  # any other binding of the name: unknown
            if isinstance(sub, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == head for t in sub.targets
            ):
                value = ast.unparse(sub.value)
                if value not in (head, f"Path({head})", f"pathlib.Path({head})"):
                    return []
        return callers.folders(path, function.name, names.index(head), head)
    return []


def _existing(base: Path, literal: str) -> Path | None:
    literal = literal.split("*", 1)[0].rstrip("/")
    if not literal or literal in (".", "..") or literal.startswith("-"):
        return None
    try:
        candidate = (base / literal).resolve()
        if candidate != base and candidate.exists() and candidate.is_relative_to(base):
            return candidate
    except (OSError, ValueError):
        return None
    return None


#: `keep(derive)`: `derive()`, or its value kept from an earlier run (`membership`'s memo).
Keep = Callable[[Callable[[], tuple[list["Component"], bool]]], tuple[list["Component"], bool]]


def python_components(
    path: Path,
    display: str,
    text: str,
    root: Path,
    callers: CallSites | None = None,
    deferred: list[Callable[[list[Component]], list[Component]]] | None = None,
    keep: Keep | None = None,
) -> list[Component]:
    """CUDA-only components named by one Python build file. With `deferred`, the helper
    modules it imports only where ROCm never runs are decided later (`deferred` receives a
    function of the run's components): another file may import them only to build one.
    `keep`: the file's own components may be kept from an earlier run (its `Paths`, the
    costly part, is then built only if it imports a project module)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    held: dict[str, Paths] = {}

    def paths_of() -> Paths:
        if "paths" not in held:
            helpers = _imported_helpers(tree, root)
            held["paths"] = Paths(text, path, helpers, tree=tree, env_defaults=True)
        return held["paths"]

    def derive() -> tuple[list[Component], bool]:
        return _own_components(tree, paths_of(), path, display, root, callers)

    if keep is None:
        own, rocm = derive()
    else:
        own, rocm = keep(derive)
        own = copy.deepcopy(own)  # `_dead_imports` adds helpers to them: not to the kept ones
    if not rocm:
        return []

    def dead_imports(known: list[Component]) -> list[Component]:
        if callers is None or not _project_imports(tree, root):
            return []  # what `_dead_imports` finds then, without building `Paths`
        return _dead_imports(tree, paths_of(), path, root, display, callers, own, known)

    if deferred is None:
        return own + dead_imports(own)
    deferred.append(dead_imports)
    return own


def _own_components(
    tree: ast.Module,
    paths: Paths,
    path: Path,
    display: str,
    root: Path,
    callers: CallSites | None,
) -> tuple[list[Component], bool]:
    """(the folders and files one build file compiles only for CUDA, whether ROCm runs any
    of it at all: a file that never runs there names no component and imports none)."""
    if not paths.rocm:
        return [], False
    base = path.resolve().parent
    cuda_only: dict[Path, str] = {}
    rocm: set[Path] = set()
    reasons: dict[Path, tuple[int, str]] = {}
    for node, literal, head in _path_literals(tree):
        if not hasattr(node, "lineno"):
            continue
        found = _existing(base, literal)
        if found is None and head is not None:
            for folder in _parameter_folders(tree, node, head, path, callers):
                found = _existing(root, str(folder.resolve() / literal))
                if found is not None:
                    break
        if found is None:
            continue
        why = paths.dead_on_rocm_only(node)
        if why:
            cuda_only.setdefault(found, literal)
            reasons.setdefault(found, (node.lineno, why))
        else:
            rocm.add(found)
    for cls, helper_files in _builder_sources(tree, paths, path, root):
        for found, literal, line in helper_files:
            cuda_only.setdefault(found, literal)
            reasons.setdefault(found, (line, f"`{cls}.is_compatible()` is False on ROCm"))
        for found in list(rocm):
            if found in {f for f, _, _ in helper_files}:
                rocm.discard(found)
    return _group(cuda_only, rocm, reasons, display), True


def _project_imports(tree: ast.Module, root: Path) -> bool:
    """Whether the file imports a module of the project by absolute name (`_dead_imports`
    looks at nothing else)."""
    return any(
        root.joinpath(*node.module.split(".")).with_suffix(".py").is_file()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and not node.level and node.module
    )


def _dead_imports(
    tree: ast.Module,
    paths: Paths,
    path: Path,
    root: Path,
    display: str,
    callers: CallSites | None,
    own: list[Component] = (),  # type: ignore[assignment]
    known: list[Component] = (),  # type: ignore[assignment]
) -> list[Component]:
    """Project modules this build file imports only in code ROCm never runs, and no other
    file of the run names (`from build_tools.paddle import setup_paddle_extension` inside
    TransformerEngine's `if "paddle" in frameworks:`): CUDA-only, as one file each. Another
    file that imports the module only to build a CUDA-only component of the run (`known`)
    with it does not count (`_builds_only_components`: TransformerEngine's
    transformer_engine/paddle/setup.py calls `setup_paddle_extension("csrc", ...)` on the
    folder the main setup.py builds only for CUDA). A module dead under the same test as a
    folder component of this file (`own`) joins that component as its build helper: one
    decision, one finding."""
    if callers is None:
        return []
    dead: dict[Path, tuple[ast.ImportFrom, str]] = {}
    live: set[Path] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and not node.level and node.module):
            continue
        target = root.joinpath(*node.module.split("."))
        module = target.with_suffix(".py")
        if not module.is_file():
            continue
        why = paths.dead_on_rocm_only(node)
        if why:
            dead.setdefault(module.resolve(), (node, node.module))
        else:
            live.add(module.resolve())
    out = []
    this = path.resolve()
    for module, (node, name) in dead.items():
        # `from build_tools import paddle` names it too; `import paddle` (the framework) not.
        named_elsewhere = any(
            other.resolve() not in (this, module)
            and not _builds_only_components(other, data, name, known)
            for other, data in callers.naming(name)
        )
        if module in live or named_elsewhere:
            continue
        why = paths.dead_on_rocm_only(node).split(": ROCm never", 1)[0]
        shown = module.relative_to(root.resolve()).as_posix()
        joined = next((c for c in own if c.why == why and not c.files), None)
        if joined is not None:
            joined.helpers[module] = shown
            continue
        out.append(
            Component(module.parent, display, node.lineno, why, f"`{shown}`", frozenset({module}))
        )
    return out


def _builds_only_components(path: Path, data: bytes, module: str, known: list[Component]) -> bool:
    """`path` names `module` only in `from <module> import f, ...` and uses each imported name
    only as a call with a string argument naming a folder or file of a CUDA-only component
    (resolved from `path`'s folder, where a setup script runs): it uses the module only to
    build code the run already knows ROCm never builds. Any other mention (a comment, a
    string, `import module`, a name passed as a value) is unknown."""
    if not known:
        return False
    try:
        tree = ast.parse(data.decode("utf-8", "replace"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == module]
    if not imports or data.count(module.encode()) != len(imports):
        return False
    names = {a.asname or a.name for n in imports for a in n.names}
    if "*" in names:
        return False
    calls = {
        id(n.func): n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
    }
    base = path.resolve().parent
    used = False
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in names):
            continue
        call = calls.get(id(node))
        if call is None:
            return False  # rebound, passed as a value, ...
        targets = [
            _existing(base, a.value)
            for a in [*call.args, *(k.value for k in call.keywords)]
            if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        if not any(t is not None and any(c.holds(t) for c in known) for t in targets):
            return False
        used = True
    return used


def _imported_helpers(tree: ast.Module, root: Path) -> ProjectIndex | None:
    """The project modules a build file imports from (`from build_tools.utils import
    get_frameworks`), run as build files too, so that their helpers' results are known."""
    files = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            target = root.joinpath(*node.module.split("."))
            for candidate in (target.with_suffix(".py"), target / "__init__.py"):
                if candidate.is_file():
                    with contextlib.suppress(OSError):
                        files.append((candidate, candidate.read_bytes()))
                    break
    return ProjectIndex.build(files, build_files=True) if files else None


def _builder_sources(tree: ast.Module, paths: Paths, path: Path, root: Path):
    """(class name, [(existing path, literal, line)]) of op builders not compatible on ROCm."""
    rocm_env, cuda_env = paths.envs.get(ROCM, {}), paths.envs.get(CUDA, {})
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        r, c = rocm_env.get(node.name), cuda_env.get(node.name)
        if not isinstance(r, ClassInfo):
            continue
        rc = r.method("is_compatible")
        cc = c.method("is_compatible") if isinstance(c, ClassInfo) else None
        if not (isinstance(rc, Helper) and rc.value.truth is False):
            continue
        if isinstance(cc, Helper) and cc.value.truth is False:
            continue
        files = []
        for method in node.body:
            if isinstance(method, ast.FunctionDef) and method.name == "sources":
                for sub, literal, _ in _path_literals(method):
                    found = _from_ancestors(path, literal, root)
                    if found is not None:
                        files.append((found, literal, getattr(sub, "lineno", node.lineno)))
        if files:
            yield node.name, files


def _from_ancestors(path: Path, literal: str, root: Path) -> Path | None:
    """Op builders name sources relative to the project root: try each folder up to it."""
    folder = path.resolve().parent
    while True:
        found = _existing(folder, literal)
        if found is not None and found.is_file():
            return found
        if folder == root or folder.parent == folder or not folder.is_relative_to(root):
            return None
        folder = folder.parent


def _group(
    cuda_only: dict[Path, str],
    rocm: set[Path],
    reasons: dict[Path, tuple[int, str]],
    display: str,
) -> list[Component]:
    """Folders of CUDA-only sources, largest first; a folder holding anything ROCm may use
    is not a component (only its listed files are)."""
    folders: dict[Path, list[Path]] = {}
    for found in cuda_only:
        folder = found if found.is_dir() else found.parent
        folders.setdefault(folder, []).append(found)
    components: list[Component] = []
    for folder in sorted(folders, key=lambda p: len(p.parts)):
        members = folders[folder]
        if any(c.holds(folder) for c in components):
            continue
        clean = not any(r == folder or r.is_relative_to(folder) for r in rocm)
        clean = clean and not _included_from(folder, rocm)
        line, why = reasons[members[0]]
        why = why.split(": ROCm never", 1)[0]
        label = cuda_only[members[0]]
        if clean:
            label = (
                label
                if Path(label).is_dir() or members[0].is_dir()
                else (str(PurePath(label).parent) or ".")
            )
            components.append(Component(folder, display, line, why, f"`{label}`"))
        else:
            files = frozenset(m for m in members if m.is_file() and m not in rocm)
            if len(files) == 1:
                label = f"`{cuda_only[next(iter(files))]}`"
            else:
                label = f"{len(files)} files listed in `{PurePath(label).parent}`"
            if files:
                components.append(Component(folder, display, line, why, label, files))
    # Merge folders that sit inside an accepted whole-folder component.
    merged: list[Component] = []
    for c in components:
        if not any(not m.files and m.holds(c.root) for m in merged):
            merged.append(c)
    return merged


_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def _included_from(folder: Path, sources: Iterable[Path]) -> bool:
    """Some source ROCm may build includes a header of `folder` (by a relative path, or by a
    path naming the folder: `#include "fused_attn/utils.h"` through an include directory)."""
    files: list[Path] = []
    for source in sources:  # a folder ROCm builds from (a glob): its own sources
        files += sorted(source.iterdir())[:500] if source.is_dir() else [source]
    for source in files:
        if not source.is_file() or not source.name.endswith(SOURCE_SUFFIXES):
            continue
        try:
            text = source.read_text("utf-8", "replace")
        except OSError:
            continue
        for name in _INCLUDE.findall(text):
            parts = PurePath(name).parts
            # `fused_attn/utils.h` names a header of fused_attn/; `torch/csrc/...` names none
            # of a project's csrc/ (the rest of the path must be a file there).
            if any(
                part == folder.name and folder.joinpath(*parts[i + 1 :]).is_file()
                for i, part in enumerate(parts[:-1])
            ):
                return True
            if (source.parent / name).resolve().is_relative_to(folder):
                return True
    return False


# -- CMake -------------------------------------------------------------------------------------
_COMMANDS = {
    "if", "elseif", "else", "endif", "add_subdirectory", "set", "unset", "option", "list",
    "add_library", "add_executable", "target_sources", "cuda_add_library", "cuda_add_executable",
    "message", "function", "endfunction", "macro", "endmacro", "foreach", "endforeach",
    "while", "endwhile",
}  # fmt: skip
_START = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*\(", re.M)


def _commands(text: str, wanted=_COMMANDS, every: bool = False) -> Iterator[tuple[str, str, int]]:
    """(command, arguments, line) of the commands of interest (`wanted`; `every`: of all
    commands), arguments found by matching parentheses (conditions nest them: `if((A OR B) AND
    NOT (C))`), quotes respected."""
    position = 0
    while True:
        match = _START.search(text, position)
        if match is None:
            return
        depth, i, quoted = 1, match.end(), False
        while i < len(text) and depth:
            c = text[i]
            if quoted:
                if c == "\\":
                    i += 1
                elif c == '"':
                    quoted = False
            elif c == '"':
                quoted = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
        name = match.group(1).lower()
        if every or name in wanted:
            line = text.count("\n", 0, match.start(1)) + 1
            yield name, text[match.end() : i - 1], line
        position = i


_SET = re.compile(r"^\s*set\s*\(\s*([A-Za-z_]\w*)\b", re.I)
_ON = {"ON", "TRUE", "YES", "Y", "1"}
_OFF = {"OFF", "FALSE", "NO", "N", "0", "IGNORE", "NOTFOUND", ""}
_SOURCE_COMMANDS = {
    "set", "list", "add_library", "add_executable", "target_sources", "cuda_add_library",
    "cuda_add_executable",
}  # fmt: skip
#: CMake's own commands that name sources without building them (properties, installs, files)
#: or are control flow; any other command not in _SOURCE_COMMANDS is the project's own macro or
#: function (faiss's `faiss_gpu_test(TestGpuIndexCagra.cu)`), which builds what it names.
_BUILTIN = re.compile(
    r"(?:target_|set_|get_|add_custom_|add_test|install|file|string|cmake_|find_|include|"
    r"message|configure_|source_group|export|ctest_|enable_|foreach|endforeach|function|"
    r"endfunction|macro|endmacro|while|endwhile|return|execute_process|try_|separate_|math|"
    r"mark_|project|option|unset|if|elseif|else|endif|add_subdirectory|add_dependencies|"
    r"add_compile_|add_definitions|add_link_|link_|variable_|define_property|load_cache|"
    r"site_name|build_command|aux_source_directory)"
)
#: Compiled sources (a header is compiled by its includers, never by being named in CMake).
_COMPILED = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")


class _Every:
    """Every command (`_commands(text, _EVERY)`)."""

    def __contains__(self, name: object) -> bool:
        return True


_EVERY = _Every()


def rocm_switch(name: str) -> bool:
    """A configure switch named for ROCm/HIP (`USE_ROCM`, `FAISS_ENABLE_ROCM`, `GGML_HIP`,
    `WITH_HIP`): at least two words, the last ROCM or HIP, none a negation."""
    words = name.upper().split("_")
    return name in ROCM_VARIABLES or (
        len(words) >= 2
        and words[-1] in ("ROCM", "HIP")
        and words[0] != "CMAKE"
        and not _NEGATIONS.intersection(words)
    )


_NEGATIONS = frozenset({"NO", "NOT", "DISABLE", "DISABLED", "SKIP", "WITHOUT", "FOUND"})
_CUDA_NAME = re.compile(r"\b[A-Za-z]\w*_CUDA\b")


def cuda_siblings(text: str) -> dict[str, str]:
    """CUDA configure switches whose HIP/ROCm sibling the same CMake text names: where a
    project builds each vendor under its own switch (`GINKGO_BUILD_CUDA` / `GINKGO_BUILD_HIP`,
    `HAVE_CUDA` / `HAVE_ROCM`), the ROCm configure is the one with the HIP switch on, and what
    the CUDA switch adds is compiled by nvcc for NVIDIA GPUs, never by the ROCm build. A switch
    with no sibling (a project not yet ported, whose port turns that same switch on) stays
    unknown. Same shape as `rocm_switch`: two words at least, none a negation, not CMAKE_.
    Returns switch -> its sibling (the evidence `--show-guarded` prints)."""
    found: dict[str, str] = {}
    for name in set(_CUDA_NAME.findall(text)):
        words = name.upper().split("_")
        if words[0] == "CMAKE" or _NEGATIONS.intersection(words):
            continue
        stem = name[: -len("CUDA")]
        for v in ("HIP", "ROCM"):
            if re.search(rf"\b{re.escape(stem + v)}\b", text):
                found[name] = stem + v
                break
    return found


def _cmake_truth(
    condition: str, variables: dict[str, bool | None], vendor: str, flow: Flow | None = None
) -> bool | None:
    """A condition's value: `X`, `NOT X`, `${X}` for a variable whose value is known
    (ROCm switches, the project's ROCm companions, ones set from them); with `flow`, also
    vendor-selector tests combined with NOT/AND/OR (`cmake_flow`)."""
    if flow is not None:
        return flow.truth(condition, lambda w: _cmake_truth(w, variables, vendor), vendor)
    words = condition.replace("${", "").replace("}", "").split()
    negate = len(words) == 2 and words[0].upper() == "NOT"
    if negate:
        words = words[1:]
    if len(words) != 1:
        return None
    name = words[0]
    value = variables.get(name)
    if value is None and name not in variables and rocm_switch(name):
        value = vendor == ROCM
    if value is None:
        return None
    return not value if negate else value


def _set_value(command: str, words: list[str]) -> bool | None:
    if command == "unset":
        return False
    if command == "set" and len(words) == 2:
        word = words[1].upper()
        return True if word in _ON else False if word in _OFF else None
    return None


def rocm_companions(text: str) -> dict[str, bool]:
    """Variables the project's ROCm configure block sets: a branch that sets a ROCm switch ON
    (TransformerEngine's tests: `set(USE_ROCM ON)` `set(USE_CUDA OFF)`) is that configure, so
    the other constant `set()`s of the same branch are what a ROCm build sees."""
    text = re.sub(r"#[^\n]*", "", text)
    branches: list[list[tuple[str, bool]]] = [[]]
    found: dict[str, bool] = {}

    def close(branch: list[tuple[str, bool]]) -> None:
        if any(rocm_switch(n) and v for n, v in branch):
            for n, v in branch:
                if not rocm_switch(n):
                    found[n] = v if found.get(n, v) == v else None  # type: ignore[assignment]

    for command, argument, _ in _commands(text):
        words = [w.strip('"') for w in argument.split()]
        if command == "if":
            branches.append([])
        elif command in ("elseif", "else") and len(branches) > 1:
            close(branches.pop())
            branches.append([])
        elif command == "endif" and len(branches) > 1:
            close(branches.pop())
        elif command in ("set", "unset") and words:
            value = _set_value(command, words)
            if value is not None:
                branches[-1].append((words[0], value))
    return {n: v for n, v in found.items() if v is not None}


def _cmake_pass(
    text: str,
    vendor: str,
    companions: dict[str, bool] | None = None,
    off: dict[str, str] | None = None,
    flow: Flow | None = None,
    every: bool = False,
) -> tuple[list[tuple[str, list[str], int, str | None]], list[tuple[int, int, str]]]:
    """(command, arguments, line, why dead) for every command, walking the if/elseif/else
    chains with what `vendor`'s build knows; and the dead branches as (first line, last line,
    why). `off`: options a ROCm build cannot turn on -> why; `flow`: the run's vendor selectors
    (`cmake_flow`). A `message(FATAL_ERROR)` that `vendor`'s configure certainly reaches inside a
    branch ends it: the rest of the innermost branch not known taken (or of the file) is dead.
    (`every` is accepted for callers that ask for every command: every command is walked.)"""
    variables: dict[str, bool | None] = {v: vendor == ROCM for v in ROCM_VARIABLES}
    siblings = cuda_siblings(text)
    for name in siblings:
        variables.setdefault(name, vendor != ROCM)
    off = off if vendor == ROCM else None
    if vendor == ROCM and companions:
        variables.update(companions)
    if off:
        variables.update(dict.fromkeys(off, False))
    # One frame per open if(): whether a branch is known taken, whether one was unknown, and
    # for the current branch: dead (never runs), maybe (may or may not run), certain (known
    # taken), fatal (why a FATAL_ERROR ended it, and from which line), why.
    stack: list[dict] = []
    out = []
    regions: list[tuple[int, int, str]] = []
    ended: tuple[int, str] | None = None  # a FATAL_ERROR outside any uncertain branch
    bodies = 0  # open function/macro/loop bodies: a FATAL_ERROR there may never run

    def close(frame: dict, line: int) -> None:
        if frame.get("dead") and line - 1 >= frame["start"]:
            regions.append((frame["start"], line - 1, frame["why"]))
        if frame.get("fatal") and line - 1 > frame["fatal"][0]:
            regions.append((frame["fatal"][0] + 1, line - 1, frame["fatal"][1]))
        frame["fatal"] = None

    commands = list(_commands(text, _EVERY))
    # Tests before a chain's HIP branch: a ROCm configure only reaches it past them.
    before_hip = rocm_false_tests(commands) if vendor == ROCM else {}
    for command, argument, line in commands:
        words = [w.strip('"') for w in argument.split()]
        dead = next((f["why"] for f in stack if f["dead"]), None)
        dead = dead or next((f["fatal"][1] for f in stack if f.get("fatal")), None)
        dead = dead or (ended[1] if ended else None)
        if command == "if" or (command == "elseif" and stack):
            truth = _cmake_truth(argument.strip(), variables, vendor, flow)
            test = f"`{command}({' '.join(argument.split())})` (line {line})"
            name = argument.replace("${", "").replace("}", "").strip()
            if off and name in off and truth is False:
                test = f"`{command}({name})` (line {line}; {off[name]})"
            elif name in siblings and truth is False and vendor == ROCM:
                test = (
                    f"`{command}({name})` (line {line}; the project's ROCm configure switch is "
                    f"its sibling `{siblings[name]}`)"
                )
            elif truth is None and line in before_hip:
                truth = False
                test = (
                    f"`{command}({' '.join(argument.split())})` (line {line}; {before_hip[line]})"
                )
            if command == "if":
                stack.append({"taken": False, "unknown": False, "test": test})
            else:
                close(stack[-1], line)
            frame = stack[-1]
            frame["dead"] = frame["taken"] or truth is False
            frame["maybe"] = not frame["taken"] and truth is None
            frame["certain"] = not frame["taken"] and truth is True
            frame["taken"] = frame["taken"] or truth is True
            frame["unknown"] = frame["unknown"] or truth is None
            frame["why"] = test
            frame["start"] = line + argument.count("\n") + 1
        elif command == "else" and stack:
            frame = stack[-1]
            close(frame, line)
            frame["dead"] = frame["taken"]
            frame["maybe"] = not frame["taken"] and frame["unknown"]
            frame["certain"] = not frame["taken"] and not frame["unknown"]
            frame["why"] = f"the `else()` of {frame['test']}"
            frame["start"] = line + 1
        elif command == "endif" and stack:
            close(stack.pop(), line)
        elif command in ("function", "macro", "foreach", "while"):
            bodies += 1
        elif command in ("endfunction", "endmacro", "endforeach", "endwhile"):
            bodies = max(bodies - 1, 0)
        elif (
            command == "message"
            and words
            and words[0].upper() == "FATAL_ERROR"
            and dead is None
            and not bodies
        ):
            # The innermost branch not known taken holds the rest of this configure.
            inner = len(stack)
            while inner and stack[inner - 1]["certain"]:
                inner -= 1
            if inner < len(stack):  # only inside a branch known taken: a configure test
                who = "ROCm" if vendor == ROCM else "CUDA"
                why = (
                    f"{stack[-1]['why']}, which ends a {who} configure with "
                    f"`message(FATAL_ERROR)` (line {line})"
                )
                for frame in stack[max(inner - 1, 0) :]:
                    frame["fatal"] = (line, why)
                if inner == 0:
                    ended = (line, why)
        elif command in ("set", "unset", "option") and words and dead is None:
            name = words[0]
            if command == "option" and (
                name in variables or rocm_switch(name) or name in (off or {})
            ):
                continue  # the build passes -DUSE_ROCM=ON; option() keeps a given value
            value = _set_value(command, words)
            if any(f["maybe"] for f in stack):  # a branch that may or may not run
                value = value if variables.get(name) == value else None
            variables[name] = value
        out.append((command, words, line, dead))
    if ended is not None:
        regions.append((ended[0] + 1, text.count("\n") + 1, ended[1]))
    return out, regions


def cmake_dead_lines(
    text: str,
    companions: dict[str, bool] | None = None,
    off: dict[str, str] | None = None,
    flow: Flow | None = None,
) -> list[tuple[int, int, str]]:
    """Line ranges of a CMake file that a ROCm configure never runs and a CUDA one may:
    (first line, last line, why)."""
    text = re.sub(r"#[^\n]*", "", text)
    _, rocm = _cmake_pass(text, ROCM, companions, off=off, flow=flow)
    _, cuda = _cmake_pass(text, CUDA, flow=flow)
    out = []
    for start, end, why in rocm:
        if not any(s <= start and end <= e for s, e, _ in cuda):
            why = (
                f"after {why}"
                if "FATAL_ERROR" in why
                else f"under {why}, which a ROCm configure never takes"
            )
            out.append((start, end, why))
    return out


def cmake_components(
    path: Path,
    display: str,
    text: str,
    companions: dict[str, bool] | None = None,
    off: dict[str, str] | None = None,
    flow: Flow | None = None,
) -> list[Component]:
    """`add_subdirectory` folders and listed sources a ROCm build of this CMake file skips
    (and a CUDA build may not)."""
    base = path.resolve().parent
    text = re.sub(r"#[^\n]*", "", text)
    rocm, cuda = (
        _cmake_pass(text, ROCM, companions, off=off, flow=flow)[0],
        _cmake_pass(text, CUDA, flow=flow)[0],
    )
    dead_dirs: dict[Path, tuple[int, str, str]] = {}
    live_dirs: set[Path] = set()
    dead_files: dict[Path, str] = {}
    reasons: dict[Path, tuple[int, str]] = {}
    live_files: set[Path] = set()
    for (command, words, line, why), (_, _, _, cuda_why) in zip(rocm, cuda, strict=True):
        only_cuda = why is not None and cuda_why is None
        if command == "add_subdirectory" and words:
            found = _existing(base, words[0])
            if found is None:
                continue
            if only_cuda:
                dead_dirs.setdefault(found, (line, why, words[0]))
            else:
                live_dirs.add(found)
        elif command in _SOURCE_COMMANDS or not _BUILTIN.match(command):
            own = command not in _SOURCE_COMMANDS  # the project's macro: compiled sources
            for word in words if own else words[1:]:
                if "${" in word or not word.endswith(_COMPILED if own else SOURCE_SUFFIXES):
                    continue
                found = _existing(base, word)
                if found is None or not found.is_file():
                    continue
                if not only_cuda:
                    live_files.add(found)  # any command naming it may build it for ROCm
                elif not own or any(r in why for r in (off or {}).values()):
                    # A project macro's file counts as CUDA-only only in the branch of an
                    # option ROCm cannot turn on (faiss's `faiss_gpu_test(TestGpuIndexCagra.cu)`
                    # under `if(FAISS_ENABLE_CUVS)`); elsewhere (TransformerEngine's NVRTC
                    # `make_string_header_from_file(x.cu ...)`) what it does is not known.
                    dead_files.setdefault(found, word)
                    reasons.setdefault(found, (line, f"listed under {why}"))
    out = []
    for found, (line, why, label) in dead_dirs.items():
        if found in live_dirs or any(f.is_relative_to(found) for f in live_files):
            continue
        why = f"`add_subdirectory({label})` under {why}"
        out.append(Component(found, display, line, why, f"`{label}`"))
    files = {f: w for f, w in dead_files.items() if f not in live_files}
    if files:
        # Listed files: a folder is a component only when nothing ROCm builds is in it.
        out += _group(files, live_files | live_dirs, reasons, display)
    for c in out:
        c.dependency = next((why for why in (off or {}).values() if why in c.why), "")
    return out


# -- a run -------------------------------------------------------------------------------------
BUILDER_TOKENS = (b"cpp_extension", b"def is_compatible")
_LISTED_SOURCE = re.compile(rb"(?i)\bif\s*\((?s:.*)\.(?:cu|cuh|cpp|cc|cxx|c|hip)\b")


def membership(
    files: Iterable[tuple[Path, str, str, bytes]],
    root: Path | None = None,
    sources: Iterable[tuple[Path, bytes]] | None = None,
    off: dict[str, str] | None = None,
    torch_built: Callable[[str], bool] | None = None,
    callers: CallSites | None = None,
    memo=None,
) -> Membership:
    """Components of a run: `files` holds (path, display, language, bytes) of its Python and
    CMake files; `sources` (path, bytes) its C/C++ files, to tell whether a header that an
    NVIDIA-only option lists is still included by code ROCm compiles (None: assume it is);
    `off` the run's NVIDIA-only options when the caller has them (`nvidia_options.options`);
    `torch_built(path)`: whether torch's cpp_extension builds a file (`context.unbuilt`);
    `callers` the run's Python files as `CallSites` (made here when not given: the caller
    passes its own to see what was asked of them). `memo` (warm.FactsMemo): each Python
    build file's own components are kept while it, what it read and the answers to what it
    asked of the other files are as they were."""
    files = list(files)
    companions: dict[str, bool | None] = {}
    for _, _, language, data in files:
        if language == "cmake" and b"set" in data:
            for name, value in rocm_companions(data.decode("utf-8", "replace")).items():
                companions[name] = value if companions.get(name, value) == value else None
    known = {n: v for n, v in companions.items() if v is not None}
    if off is None:
        from cuda2rocm.context import nvidia_options

        off = nvidia_options.options((p, d, data) for p, d, _, data in files)
    cmake_files = [(p, d, data) for p, d, language, data in files if language == "cmake"]
    flow = build_flow(data.decode("utf-8", "replace") for _, _, data in cmake_files)
    known.update(_unset_on_rocm(files, cmake_files, known, off, flow))
    if callers is None:
        callers = CallSites((p, d) for p, _, language, d in files if language == "python")
    found: list[Component] = []
    deferred: list[Callable[[list[Component]], list[Component]]] = []
    for path, display, language, data in files:
        try:
            if language == "python" and any(t in data for t in BUILDER_TOKENS):
                base = root or path.resolve().parent
                text = data.decode("utf-8", "replace")
                keep = _keeper(memo, callers, path, display, data, base)
                found += python_components(path, display, text, base, callers, deferred, keep)
            elif language == "cmake" and (
                b"add_subdirectory" in data or off or _LISTED_SOURCE.search(data)
            ):
                # A file that lists sources is read on its own: whether its parent's
                # add_subdirectory() resolves or not (a computed path), what it builds under
                # a branch ROCm never takes is the same.
                text = data.decode("utf-8", "replace")
                more = cmake_components(path, display, text, known, off, flow)
                if not (b"add_subdirectory" in data or off):
                    more = _named_nowhere_else(more, path, cmake_files)
                found += more
        except (RecursionError, OSError, ValueError):
            continue  # an unreadable build file: nothing is guarded by it
    with contextlib.suppress(RecursionError, OSError, ValueError):
        found += source_components(cmake_files, known, flow)
    components = list(found)
    for decide in deferred:  # helper modules: once every component of the run is known
        try:
            found += decide(components)
        except (RecursionError, OSError, ValueError):
            continue
    if off:
        found = _included_headers(found, files, off, sources)
    texts = [
        (display, re.sub(r"#[^\n]*", "", data.decode("utf-8", "replace")))
        for _, display, language, data in files
        if language == "cmake"
    ]
    from cuda2rocm.context.unbuilt import unbuilt_sources

    unbuilt: dict[Path, str] = {}
    with contextlib.suppress(RecursionError, OSError, ValueError):
        unbuilt = unbuilt_sources(cmake_files, torch_built)
    if sources is not None:
        with contextlib.suppress(RecursionError, OSError, ValueError):
            found += headers_of_components(found, sources)
    return Membership(found, known, off, texts, flow, unbuilt if cmake_files else {})


def _unset_on_rocm(files, cmake_files, known, off, flow) -> dict[str, bool]:
    """Project variables only `set()` where a ROCm configure never goes (`cmake_unset`): False
    there. Twice, since a flag found so may make another branch's `set()`s dead."""
    from cuda2rocm.context.cmake_unset import rocm_unset

    texts = [re.sub(r"#[^\n]*", "", d.decode("utf-8", "replace")) for _, _, d in cmake_files]
    python = [d for _, _, language, d in files if language == "python" and b"-D" in d]
    found: dict[str, bool] = {}
    for _ in range(2):
        seen = {**known, **found}

        def rocm_pass(text: str, seen: dict[str, bool] = seen) -> list:
            return _cmake_pass(text, ROCM, seen, off=off, flow=flow)[0]

        with contextlib.suppress(RecursionError, ValueError):
            found.update(dict.fromkeys(rocm_unset(texts, rocm_pass, python), False))
    return found


def _named_nowhere_else(
    found: list[Component], path: Path, cmake_files: list[tuple[Path, str, bytes]]
) -> list[Component]:
    """Listed-file components of one CMake file that no other CMake file of the run names (by
    file name): another file listing the same source may build it for ROCm."""
    others = [d for p, _, d in cmake_files if p != path]
    return [
        c
        for c in found
        if not c.files or not any(f.name.encode() in d for f in c.files for d in others)
    ]


_ANY_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)


def headers_of_components(
    found: list[Component], sources: Iterable[tuple[Path, bytes]]
) -> list[Component]:
    """Headers that only CUDA-only components include join them: a header is compiled by
    its includers, never by itself, so one whose every includer is a file the ROCm build
    never compiles is never compiled either (a `cutlass_helpers.cuh` included only from a
    CUTLASS op the setup lists for CUDA). Conservative: a header some other file includes by
    a name ending in its file name (through an `-I` path we cannot resolve) stays live. A
    fixpoint, so headers of such headers follow."""
    if not found:
        return []
    includes: dict[Path, list[tuple[bool, str]]] = {}
    for path, data in sources:
        resolved = Path(os.path.abspath(path))
        includes[resolved] = [
            (m.group(1) == b'"', m.group(2).decode("utf-8", "replace"))
            for m in _ANY_INCLUDE.finditer(data)
        ]
    out: list[Component] = []

    def held(path: Path) -> Component | None:
        return next((c for c in [*found, *out] if c.holds(path)), None)

    changed = True
    while changed:
        changed = False
        includers: dict[Path, list[Path]] = {}
        by_name: dict[str, set[Path]] = {}
        for source, names in includes.items():
            for quoted, name in names:
                by_name.setdefault(PurePath(name).name, set()).add(source)
                if quoted:
                    target = Path(os.path.normpath(source.parent / name))
                    includers.setdefault(target, []).append(source)
        for header in includes:
            if header.suffix in _COMPILED or held(header) is not None:
                continue
            direct = includers.get(header, [])
            owners = [held(i) for i in direct]
            if not direct or any(o is None for o in owners):
                continue
            if any(held(i) is None for i in by_name.get(header.name, ())):
                continue  # a live file may include it through an include path
            owner = owners[0]
            if owner.files and owner in out:
                # A file-level component of headers already: one component, one finding.
                out[out.index(owner)] = dataclasses.replace(owner, files=owner.files | {header})
            else:
                out.append(
                    Component(
                        header,
                        owner.build_file,
                        owner.line,
                        owner.why,
                        f"`{header.name}` (included only from {owner.label})",
                        frozenset({header}),
                    )
                )
            changed = True
    return out


def _keeper(memo, callers: CallSites, path: Path, display: str, data: bytes, base: Path):
    """`keep` for `python_components`: one memo part per build file (warm.FactsMemo.call),
    kept while the answers to the questions it asked of the run's files are the same."""
    if memo is None:
        return None
    from cuda2rocm.cache import content_hash

    def answer(question) -> list:
        return [(str(p), content_hash(d)) for p, d in callers.answer(tuple(question))]

    def keep(derive):
        before = len(callers.asked)

        def compute():
            value = derive()
            return value, [(q, answer(q)) for q in callers.asked[before:]]

        def valid(kept) -> bool:
            return all(answer(q) == got for q, got in kept[1])

        inputs = [str(path), display, content_hash(data), str(base)]
        value, answers = memo.call(f"python-components {display}", inputs, compute, valid)
        if len(callers.asked) == before:  # kept: the questions still count as asked
            callers.asked.extend(q for q, _ in answers)
        return value

    return keep


def _included_headers(
    found: list[Component],
    files: list[tuple[Path, str, str, bytes]],
    off: dict[str, str],
    sources: Iterable[tuple[Path, bytes]] | None,
) -> list[Component]:
    """Headers an NVIDIA-only option lists stay in its component only when every file of the
    run that includes them (outside such components) does so under a macro only that option
    defines (faiss's GpuCloner.cpp: `#if defined(USE_NVIDIA_CUVS) && ...`): a header is
    compiled by its includers, not by being listed."""
    from cuda2rocm.context import nvidia_options

    sources = list(sources) if sources is not None else None
    dead = {f for c in found if c.dependency for f in c.files}
    names = nvidia_options.macros(((p, d, data) for p, d, _, data in files), off)
    out = []
    for c in found:
        if c.dependency and c.files:
            kept = frozenset(
                f
                for f in c.files
                if f.suffix in _COMPILED
                or (
                    sources is not None
                    and not nvidia_options.included_live(f, sources, dead, names)
                )
            )
            if not kept:
                continue
            c.files = kept
        out.append(c)
    return out
