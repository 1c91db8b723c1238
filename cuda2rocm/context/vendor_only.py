"""Code that is NVIDIA-only by design or by decision: reported once, not line by line.

Signals, each one a fact that can be read statically; anything short of them stays
reported (unknown is not "not on the ROCm path").

1. **Architecture-specific components** (`arch_components`). A sub-folder of the run with its
   own build file (a `setup.py` / extension build, or a `CMakeLists.txt`) that
   - passes an NVIDIA *architecture-specific* target: `sm_90a`, `compute_100a`, `sm_100f`, a
     CMake `CUDA_ARCHITECTURES 90a` (the `a`/`f` suffixes). NVIDIA defines these as feature
     sets of one architecture (family), not forward compatible, that no other GPU runs (CUDA C++
     Programming Guide, "Feature Availability"); a build asks for one only for code written
     against those features (Hopper's wgmma, setmaxnreg, TMA multicast);
   - names no AMD GPU target (`gfx*`, `--offload-arch`, `PYTORCH_ROCM_ARCH`, `AMDGPU_TARGETS`,
     `GPU_TARGETS`, `*HIP_ARCHITECTURES`), and the target is not in a branch a ROCm build skips
     (Python: `python_paths`; a CMake file that mentions ROCm/HIP at all is passed over): so no
     ROCm variant of that build exists; the ROCm pass, if run, would get the NVIDIA target;
   - is not compiled by a HIP target elsewhere (`hip_listings`: a HIP CMakeLists globbing
     `../<folder>/*.cu`): its own build is then the CUDA half, and the ROCm build compiles
     the same sources with hipcc.
   Its whole folder (sources, tests, benchmarks, scripts) is guarded, with one
   `cuda-only-component` finding at the target (warning: whether to port it is a decision the
   user has to take; a reimplementation, e.g. flash-attention's FA3 `hopper/` against the
   composable_kernel or Triton backends ROCm uses): its tests and benchmarks exercise the
   NVIDIA-only extension. A non-C file of it that names ROCm / HIP / AMD (`ROCM_MARK`) may have
   a ROCm path (FA3's `flash_attn_interface.py` falls back to Triton under `torch.version.hip`,
   `test_flash_attn_triton_amd.py` tests that path): it stays reported, except, in the build
   file, the module-level statement that passes the target when that statement names no ROCm
   (FA3 `if not SKIP_CUDA_BUILD:`; its ROCm path is elsewhere in the file). A plain CUDA
   target (`sm_80`, `compute_70`) is no such signal: that code is
   to be ported (flash-attention's `csrc/layer_norm`), and its findings say how. Nor are the
   sources' contents (wgmma / TMA PTX): those need a port, which inline-ptx reports. The run's
   root build is never a component: that is the project the user came to port.
1b. **CuTe DSL packages** (`dsl_components`). NVIDIA's CUTLASS Python DSL (`import cutlass`,
   `cutlass.cute`) compiles Python kernels "through the CUTLASS Python compiler stack and
   NVIDIA CUDA toolchain to JIT-compile CUDA kernels" (CUTLASS 4.7 docs, pythonDSL/overview),
   targeting the Tensor Cores of NVIDIA Ampere/Hopper/Blackwell (PyPI nvidia-cutlass-dsl): no
   AMD backend. A sub-folder of the run where most Python files import it at module level
   (directly, or through such a folder's package, e.g. FA4's `tests/cute` importing
   `flash_attn.cute`) is a CUDA-only component: one finding at its first `cutlass` import, the
   rest guarded, except files that name ROCm (as in 1).
1c. **Standalone CUDA sub-projects** (`standalone_cuda`): a folder with a CMake `project()`
   of its own for CUDA that no other build file of the run adds or names, with no ROCm branch
   and no ported source: nothing built for ROCm compiles it (a C++ test harness, a sample).
2. **Declared CUDA-only** (`cuda-only = ["hopper/", "tools/ci/"]` in `[tool.cuda2rocm]`):
   paths the project has decided to keep NVIDIA-only. Every finding in them is guarded with
   "declared CUDA-only in <config file>"; no summary, the decision is taken.
3. **CUDA variants of scripts.** The project's scripts select a CUDA variant explicitly:
   - a shell `case` arm whose every pattern names a CUDA variant (`cu112)`, `cu1*|cu2*)`,
     `cuda)`, `nvidia*)`) runs only when the selector says CUDA;
   - a file under a CI / packaging folder (`.github/`, `ci/`, `packaging/`, ...) whose path
     has a CUDA-variant component (`.github/workflows/cuda/`, `Dockerfile.cu121`,
     `build-cuda.sh`) configures the CUDA job;
   - a script or recipe anywhere (shell, Dockerfile, requirements) whose path component names
     a CUDA variant beside a sibling that names a ROCm one (`tests/cuda12.Dockerfile` next to
     `tests/rocm-6.Dockerfile`): one job of a variant matrix.
   Their findings (TORCH_CUDA_ARCH_LIST is ignored by ROCm, `--gpus all`, a cu121 wheel index)
   are right for that variant: a ROCm port adds a ROCm arm / job beside it and does not edit
   it. They are guarded. When the script has a ROCm variant (a `rocm*)` / `hip*)` arm, a
   sibling path naming rocm/hip/amd) nothing more is said; when it has none and a guarded
   finding asked for an action (error or warning), the gap is real and stays reported as ONE
   finding at the `case` (or the file): add a ROCm variant. Guarded notes (info) add nothing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from cuda2rocm.cache import content_hash
from cuda2rocm.context import hip_listings
from cuda2rocm.context.build import SOURCE_SUFFIXES, Component
from cuda2rocm.context.hip_listings import HipListing
from cuda2rocm.context.python_paths import NoMemo

# -- 1. architecture-specific components --------------------------------------------------------
ARCH_SPECIFIC = re.compile(r"\b(?:sm|compute)_\d{2,3}[af]\b")
CMAKE_ARCH = re.compile(r"CUDA_ARCH(?:ITECTURE)?S\b[^)\n]*?(?<![\w.])(\d{2,3}[af])\b")
AMD_TARGET = re.compile(
    r"gfx\d|--offload-arch|PYTORCH_ROCM_ARCH|AMDGPU_TARGETS|GPU_TARGETS|HIP_ARCHITECTURES"
)
CMAKE_ROCM = re.compile(r"rocm|\bhip", re.I)
PY_BUILD_TOKENS = (b"cpp_extension", b"CUDAExtension")
COMPILED = (*(s for s in SOURCE_SUFFIXES if s != ".hip"), ".hxx")


def _python_target(path: Path, text: str) -> tuple[int, str] | None:
    """(line, literal) of an arch-specific target in live code of a Python build file."""
    from cuda2rocm.context.python_paths import Paths

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    paths = Paths(text, path, tree=tree, env_defaults=True)
    in_function = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for sub in ast.walk(node)
    }
    prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings
    found = [
        (id(node) in in_function, node.lineno, node.value.strip())
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and id(node) not in prose
        and isinstance(node.value, str)
        and ARCH_SPECIFIC.search(node.value)
        and not paths.dead_on_rocm_only(node)
    ]
    # The line to show: module-level build code first (a helper may only rewrite flags).
    return min(found)[1:] if found else None


def _python_target_or_none(path: Path, text: str) -> tuple[int, str] | None:
    try:
        return _python_target(path, text)
    except RecursionError:
        return None


def _cmake_target(text: str) -> tuple[int, str] | None:
    code = re.sub(r"#[^\n]*", "", text)
    if CMAKE_ROCM.search(code):
        return None  # a ROCm/HIP branch may build it: not known
    for number, line in enumerate(code.splitlines(), 1):
        match = ARCH_SPECIFIC.search(line) or CMAKE_ARCH.search(line)
        if match:
            return number, match.group(match.lastindex or 0)
    return None


def arch_components(
    files: Iterable[tuple[Path, str, str, bytes]],
    root: Path | None,
    memo=None,
    listed: list[HipListing] | None = None,
) -> list[Component]:
    """Components whose own build targets NVIDIA architecture-specific features only
    (signal 1). `files` holds (path, display, language, bytes) of the run's build files;
    `memo` (warm.FactsMemo) keeps what is derived from one file, or one folder, across runs;
    `listed`: what the run's HIP CMake targets compile (`hip_listings`, read from `files` when
    None): a folder a HIP target compiles from is no CUDA-only component."""
    if root is None:
        return []
    files = list(files)
    memo = memo if memo is not None else NoMemo()
    root = root.resolve()
    if listed is None:
        listed = hip_listings.listings((p, d, b) for p, d, lang, b in files if lang == "cmake")
    found: list[Component] = []
    for path, display, language, data in files:
        is_cmake = language == "cmake" and path.name == "CMakeLists.txt"
        is_python = language == "python" and memo.per_file(
            "py-build?", (content_hash(data),), lambda d=data: any(t in d for t in PY_BUILD_TOKENS)
        )
        if not (is_cmake or is_python):
            continue
        folder = path.resolve().parent
        if folder == root or not folder.is_relative_to(root):
            continue
        text = data.decode("utf-8", "replace")
        named = ARCH_SPECIFIC.search(text) or (is_cmake and CMAKE_ARCH.search(text))
        if not named or AMD_TARGET.search(text):
            continue
        if is_cmake:
            target = _cmake_target(text)
        else:
            key = (path.resolve().as_posix(), content_hash(data))
            target = memo.per_file(
                "arch-target", key, lambda p=path, t=text: _python_target_or_none(p, t)
            )
        if target is None:
            continue
        hip = hip_listings.compiled(listed, folder)
        if hip is not None:
            # The sources are ROCm's (a HIP target elsewhere compiles them); this build file,
            # NVIDIA-only by its target, is the CUDA half of the project's build.
            found.append(hip_listings.cuda_build_file(path, display, target, hip, root))
            continue
        if not any(p.suffix in COMPILED and p.is_file() for p in folder.rglob("*")):
            continue
        line, literal = target
        block = None
        if not is_cmake and ROCM_MARK.search(text):
            block = memo.per_file(
                "statement-lines",
                (content_hash(data), line),
                lambda text=text, line=line: _statement_lines(text, line),
            )
        label = f"`{folder.relative_to(root).as_posix()}/`"
        why = (
            f"its build targets `{literal}`, an NVIDIA architecture-specific feature set that no "
            "other GPU runs, names no AMD GPU target and has no ROCm branch; a ROCm port is a "
            "reimplementation (e.g. on composable_kernel or Triton)"
        )
        held = _held_memo(memo, folder)
        if held:
            extent = (path.resolve(), block) if block else None
            found.append(VendorComponent(folder, display, line, why, label, held, extent))
    # A component inside another is the same decision.
    return [
        c for c in found if not any(o is not c and c.root.is_relative_to(o.root) for o in found)
    ]


ROCM_MARK = re.compile(
    r"rocm|torch\.version\.hip|IS_HIP_EXTENSION|__HIP_PLATFORM|\bhip\b|\bamd\b|_amd\b|aiter|gfx\d",
    re.I,
)


@dataclass
class VendorComponent(Component):
    """A component NVIDIA-only by design (signals 1 and 1b)."""

    #: (build file, line ranges) of its NVIDIA build statement, and of the functions only it
    #: uses, in a build file that also holds a ROCm path (that file is not in `files`).
    block: tuple[Path, tuple[tuple[int, int], ...]] | None = None
    dsl: bool = False

    @property
    def reason(self) -> str:
        what = "is NVIDIA-only" if self.dsl else f"{self.build_file} compiles only for CUDA"
        return f"in {self.label}, which {what} ({self.why}); reported once as cuda-only-component"


def _held_memo(memo, folder: Path) -> frozenset[Path]:
    """`_held(folder)`, kept while nothing it listed or read changed."""
    if not hasattr(memo, "call"):
        return _held(folder)
    return memo.call(f"held {folder.as_posix()}", [folder.as_posix()], lambda: _held(folder))


def _held(folder: Path) -> frozenset[Path]:
    """Files of a CUDA-only component's folder that are guarded: all but non-C files that
    name ROCm (they may hold a ROCm path)."""
    from cuda2rocm.warm import note_read

    held = set()
    for p in folder.rglob("*"):
        resolved = p.resolve()
        if not p.is_file():
            continue
        if p.suffix not in COMPILED:
            note_read(p)  # its size decides too, whether read or not
            try:
                if p.stat().st_size > 4_000_000 or ROCM_MARK.search(
                    p.read_bytes().decode("utf-8", "replace")
                ):
                    continue
            except OSError:
                continue
        held.add(resolved)
    return frozenset(held)


def _statement_lines(text: str, line: int) -> tuple[tuple[int, int], ...] | None:
    """Line ranges of the module-level statement holding `line`, when it names no ROCm, and of
    the module-level functions used only inside it (FA3's `check_if_cuda_home_none`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = text.splitlines()
    block = next(
        (
            (n.lineno, n.end_lineno or n.lineno)
            for n in tree.body
            if n.lineno <= line <= (n.end_lineno or n.lineno)
        ),
        None,
    )
    if block is None or ROCM_MARK.search("\n".join(lines[block[0] - 1 : block[1]])):
        return None
    uses: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            uses.setdefault(node.id, []).append(node.lineno)
    ranges = [block]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            seen = uses.get(node.name, [])
            if seen and all(block[0] <= n <= block[1] for n in seen):
                ranges.append((node.lineno, node.end_lineno or node.lineno))
    return tuple(ranges)


def block_reason(linter, path: str, line: int) -> str:
    """Why `line` of a component's build file is guarded (its NVIDIA build statement), or ""."""
    membership = getattr(linter, "build_membership", None)
    if membership is None:
        return ""
    resolved = Path(path).resolve()
    for c in membership.components:
        block = getattr(c, "block", None)
        if block and block[0] == resolved and any(a <= line <= b for a, b in block[1]):
            return c.reason
    return ""


# -- 1b. CuTe DSL packages ----------------------------------------------------------------------
def _module_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of the module-level imports outside try/if (always executed)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module))
    return out


def _parsed_imports(data: bytes) -> tuple[tuple[int, str], ...] | None:
    """`_module_imports` of the file's bytes; None when they do not parse."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tuple(_module_imports(tree))


def _is_dsl(module: str) -> bool:
    return module == "cutlass" or module.startswith("cutlass.")


def dsl_components(
    files: Iterable[tuple[Path, str, str, bytes]], root: Path | None, memo=None
) -> list[Component]:
    """Sub-folders whose Python is mostly CuTe DSL code (signal 1b). `memo`: each file's
    import list is kept per file (warm.FactsMemo)."""
    if root is None:
        return []
    memo = memo if memo is not None else NoMemo()
    files = [f for f in files if f[2] == "python"]
    if not any(
        memo.per_file("cutlass?", (content_hash(d),), lambda d=d: b"cutlass" in d)
        for *_, d in files
    ):
        # No file names the DSL: no direct user, so no DSL package and no component (the
        # common case; saves parsing every Python file of a large tree).
        return []
    root = root.resolve()
    # Only the folders where a file may import the DSL (or a package written in it) are
    # parsed, every file of such a folder (a folder's share of DSL users decides); a file
    # elsewhere names neither, so its folder cannot be mostly DSL (it was 2 of FA's 23 s).
    under: dict[Path, list[tuple[Path, str, bytes]]] = {}
    for path, display, _, data in files:
        resolved = path.resolve()
        if resolved.is_relative_to(root):
            under.setdefault(resolved.parent, []).append((resolved, display, data))
    imports: dict[Path, list[tuple[int, str]]] = {}
    shown: dict[Path, str] = {}
    by_folder: dict[Path, list[Path]] = {}
    read: set[Path] = set()

    def read_folders(naming: Callable[[bytes], bool]) -> None:
        """Parse the files of each folder that holds a file `naming` accepts (or one with
        non-ASCII bytes: an identifier the parser normalizes)."""
        for folder, members in under.items():
            if folder in read or not any(
                naming(data) or not data.isascii() for _, _, data in members
            ):
                continue
            read.add(folder)
            for resolved, display, data in members:
                if resolved in imports:
                    continue  # the same file reached twice
                found = memo.per_file(
                    "module-imports", (content_hash(data),), lambda data=data: _parsed_imports(data)
                )
                if found is None:
                    continue
                imports[resolved] = list(found)
                shown[resolved] = display
                by_folder.setdefault(folder, []).append(resolved)

    read_folders(lambda data: b"cutlass" in data)

    def mostly(folder: Path, uses) -> bool:
        members = by_folder.get(folder, [])
        return folder != root and 2 * sum(1 for p in members if uses(p)) > len(members)

    def direct(p: Path) -> bool:
        return any(_is_dsl(m) for _, m in imports[p])

    # Packages written in the DSL, by dotted name (at least two parts: `flash_attn.cute`).
    packages = [f for f in by_folder if (f / "__init__.py") in imports and mostly(f, direct)]
    dotted = set()
    for f in packages:
        parts = f.relative_to(root).parts
        dotted |= {".".join(parts[i:]) for i in range(len(parts) - 1)}
    words = [[w.encode() for w in d.split(".")] for d in dotted]
    read_folders(lambda data: any(all(w in data for w in name) for name in words))

    def uses(p: Path) -> bool:
        return any(
            _is_dsl(m) or any(m == d or m.startswith(d + ".") for d in dotted)
            for _, m in imports[p]
        )

    found = []
    for folder in sorted(by_folder):
        if not mostly(folder, uses):
            continue
        candidates = sorted(
            (str(p), line, p)
            for p in by_folder[folder]
            for line, m in imports[p]
            if _is_dsl(m) or (uses(p) and not any(_is_dsl(n) for _, n in imports[p]))
        )
        direct_hits = [c for c in candidates if any(_is_dsl(m) for _, m in imports[c[2]])]
        _, line, first = (direct_hits or candidates)[0]
        held = _held_memo(memo, folder)
        if not held:
            continue
        label = f"`{folder.relative_to(root).as_posix()}/`"
        why = (
            "its Python is NVIDIA CuTe DSL code (`cutlass` / `cutlass.cute`), which compiles "
            "through the NVIDIA CUDA toolchain for NVIDIA GPUs only; a ROCm port is a "
            "reimplementation (e.g. in Triton or on composable_kernel)"
        )
        found.append(VendorComponent(folder, shown[first], line, why, label, held, dsl=True))
    return [
        c for c in found if not any(o is not c and c.root.is_relative_to(o.root) for o in found)
    ]


def components(
    files: Iterable[tuple[Path, str, str, bytes]], root: Path | None, memo=None
) -> list[Component]:
    """Signals 1 and 1b; a component inside another is the same decision. `memo`
    (warm.FactsMemo) keeps what one file or folder gives across runs."""
    files = list(files)
    found = arch_components(files, root, memo) + dsl_components(files, root, memo)
    found += standalone(files, root, memo)
    return [
        c for c in found if not any(o is not c and c.root.is_relative_to(o.root) for o in found)
    ]


def standalone(
    files: list[tuple[Path, str, str, bytes]], root: Path | None, memo=None
) -> list[Component]:
    """Signal 1c: CMake sub-projects of their own for CUDA that nothing else builds
    (`standalone_cuda`)."""
    from cuda2rocm.context.standalone_cuda import standalone_components

    memo = memo if memo is not None else NoMemo()
    out: list[Component] = []
    for folder, display, line, why, label in standalone_components(
        files, root, CMAKE_ROCM, AMD_TARGET, COMPILED
    ):
        held = _held_memo(memo, folder)
        if held:
            out.append(VendorComponent(folder, display, line, why, label, held))
    return out


# -- 3. CUDA variants of scripts ----------------------------------------------------------------
_CUDA_WORD = re.compile(r"^(?:cu\d[\w.]*|cu|cuda[\w.]*|nvidia\w*)$", re.I)
_ROCM_WORD = re.compile(r"^(?:rocm[\w.]*|hip\w*|amd\w*)$", re.I)
_CUDA_PATH_WORD = re.compile(r"^(?:cu\d{2,3}|cuda[\d.]*|nvidia)$", re.I)
CI_DIRS = frozenset(
    {".github", ".gitlab", ".circleci", ".buildkite", ".ci", "ci", "packaging", "docker"}
)


def _variant(pattern: str, word: re.Pattern[str]) -> bool:
    """Whether one case pattern names a variant `word` matches (`cu1*` -> `cu1`)."""
    bare = pattern.strip().strip("\"'").rstrip("*").rstrip(".")
    return bool(bare) and bool(word.match(bare))


_CASE = re.compile(r"^\s*case\s+.+\s+in\s*(?:#.*)?$")
_ARM = re.compile(r"^\s*\(?\s*([^()#]+?)\s*\)(.*)$")
_ARM_END = re.compile(r";;&?\s*(?:#.*)?$|;&\s*(?:#.*)?$")


def case_arms(text: str) -> list[tuple[int, list[tuple[int, int, list[str]]]]]:
    """Shell `case` statements: (line of `case`, [(first line, last line, patterns)])."""
    out = []
    stack: list[dict] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if _CASE.match(line):
            stack.append({"line": number, "arms": [], "arm": None})
            continue
        if not stack:
            continue
        frame = stack[-1]
        if re.match(r"^esac\b", stripped):
            if frame["arm"] is not None:
                frame["arms"].append((*frame["arm"][:1], number - 1, frame["arm"][1]))
            out.append((frame["line"], frame["arms"]))
            stack.pop()
            continue
        if frame["arm"] is None:
            match = _ARM.match(line)
            if match is None:
                continue
            patterns = [p for p in match.group(1).split("|")]
            frame["arm"] = (number, patterns)
            rest = match.group(2)
        else:
            rest = line
        if _ARM_END.search(rest.strip()):
            frame["arms"].append((frame["arm"][0], number, frame["arm"][1]))
            frame["arm"] = None
    return out


#: Languages of scripts and recipes: a file of one is a job of its variant, not a source.
SCRIPT_LANGUAGES = frozenset({"shell", "dockerfile", "requirements"})


def _ci_variant(path: str, script: bool = False) -> tuple[str, bool] | None:
    """(the CUDA-named path component, whether a ROCm sibling exists) of a CI/packaging
    file whose path names the CUDA variant, else None. The path is read below the repository
    (the nearest folder with `.git`), or whole when there is none. A script or recipe
    (`script`) outside such folders is a CUDA variant only when a sibling of the component
    names a ROCm variant: the folder holds a variant matrix (`cuda12.sh` beside `rocm6.sh`),
    and a lone `cuda.sh` may be the project's only way to run. Only the file's own name is
    read then: a folder's name may be anything (a checkout named `cuda-x` beside `rocm-y`)."""
    resolved = Path(path).resolve()
    base = next((p for p in resolved.parents if (p / ".git").exists()), Path(resolved.anchor))
    parts = resolved.relative_to(base).parts
    ci = next((i for i, p in enumerate(parts[:-1]) if p in CI_DIRS), None)
    if ci is None and not script:
        return None
    matrix_only = ci is None
    for depth in range(ci + 1 if ci is not None else len(parts) - 1, len(parts)):
        part = parts[depth]
        tokens = re.split(r"[-_.]", part)
        if any(_CUDA_PATH_WORD.match(t) for t in tokens if t):
            parent = base.joinpath(*parts[:depth])
            try:
                siblings = [p.name for p in parent.iterdir()] if parent.is_dir() else []
            except OSError:
                siblings = []
            rocm = any(
                any(_ROCM_WORD.match(t) for t in re.split(r"[-_.]", s) if t) for s in siblings
            )
            if matrix_only and not rocm:
                continue
            return part, rocm
    return None


# -- the hook -----------------------------------------------------------------------------------
def guard(linter, source, found: list) -> list:
    """`found` with `guarded` set on findings in declared CUDA-only paths and CUDA variants
    of scripts, plus one finding per CUDA-only variant that has no ROCm counterpart."""
    import dataclasses

    from cuda2rocm.engine import NEVER_GUARDED

    if not found:
        return found
    declared = getattr(linter, "cuda_only_for", None)
    origin = declared(source.path) if declared is not None else ""
    if origin:
        why = f"declared CUDA-only in {origin}"
        return [
            d if d.guarded or d.rule in NEVER_GUARDED else dataclasses.replace(d, guarded=why)
            for d in found
        ]
    out = list(found)
    if source.language == "python":
        for i, d in enumerate(out):
            why = (
                ""
                if d.guarded or d.rule in NEVER_GUARDED
                else block_reason(linter, source.path, d.position.line)
            )
            if why:
                out[i] = dataclasses.replace(d, guarded=why)
    variant = _ci_variant(source.path, source.language in SCRIPT_LANGUAGES)
    if variant is not None:
        part, rocm = variant
        why = f"a CI/packaging file of the CUDA variant (`{part}`)" + (
            "; the project has a ROCm variant beside it" if rocm else ""
        )
        hit = [d for d in out if not d.guarded and d.rule not in NEVER_GUARDED]
        out = [dataclasses.replace(d, guarded=why) if d in hit else d for d in out]
        if not rocm and _acts(linter, hit):
            what = f"`{part}` is a CUDA CI/packaging variant"
            out += _summary(linter, source.path, 1, what, len(hit))
        return out
    if source.language == "shell" and "case" in source.text:
        for line, arms in case_arms(source.text):
            cuda = [a for a in arms if a[2] and all(_variant(p, _CUDA_WORD) for p in a[2])]
            if not cuda:
                continue
            rocm = any(any(_variant(p, _ROCM_WORD) for p in a[2]) for a in arms)
            names = ", ".join(p.strip() for a in cuda for p in a[2])
            why = f"in the CUDA arm of the `case` at line {line} ({names})" + (
                "; the `case` has a ROCm arm" if rocm else ""
            )
            hit = [
                i
                for i, d in enumerate(out)
                if not d.guarded
                and d.rule not in NEVER_GUARDED
                and any(a[0] <= d.position.line <= a[1] for a in cuda)
            ]
            for i in hit:
                out[i] = dataclasses.replace(out[i], guarded=why)
            if not rocm and _acts(linter, [out[i] for i in hit]):
                what = f"the `case` at line {line} selects CUDA variants ({names})"
                out += _summary(linter, source.path, line, what, len(hit))
    return out


def _acts(linter, guarded: list) -> bool:
    """Whether any of `guarded` asked for an action (error or warning, after the configured
    severities): the summary stands in for actions, it does not turn notes into one."""
    severity = getattr(linter, "severity", None) or {}
    return any(severity.get(d.rule, d.severity).value != "info" for d in guarded)


def _summary(linter, path: str, line: int, what: str, n: int) -> list:
    """One cuda-only-component finding for a CUDA variant with no ROCm counterpart."""
    from cuda2rocm.engine import _general

    if "cuda-only-component" not in getattr(linter, "selected", ()):
        return []
    message = (
        f"{what} and the project has no ROCm variant: add a ROCm one beside it "
        "(PYTORCH_ROCM_ARCH, the ROCm torch wheels, /dev/kfd and /dev/dri) rather than editing "
        f"this one; its {n} findings are not reported (`--show-guarded` lists them)"
    )
    return [_general("cuda-only-component", path, message, line)]
