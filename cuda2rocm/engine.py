"""The lint pipeline: discovered file -> prefilter -> front-end -> rules -> diagnostics.

A file never stops the run: what cannot be read, decoded or parsed, and a rule that raises,
each become a diagnostic of that file.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cuda2rocm import sources
from cuda2rocm.catalogue import RuleSpec, find_rule, load_catalogue, matches
from cuda2rocm.discover import CONTEXT_ONLY, Found
from cuda2rocm.model import Diagnostic, Edit, Fix, Position, Safety, Severity
from cuda2rocm.sources import SourceError, SourceFile

#: Languages of the text front-end (frontends/text.py, imported only when such a file is linted).
TEXT_LANGUAGES = ("cmake", "requirements", "dockerfile", "shell")
#: The tool's own trouble is always reported, wherever it happens.
NEVER_GUARDED = frozenset({"internal-error", "read-error"})
BUG_HINT = "this is a bug in cuda2rocm; please report it with the file that triggers it"


@dataclass
class Notice:
    """A file passed over on purpose (binary, too large) or a path that could not be walked."""

    path: str
    message: str
    #: The file was passed over (binary, too large); False for a note about a file that was
    #: linted (C++ syntax recovered from).
    skipped: bool = True


@dataclass
class LintResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    files: int = 0
    #: Findings in code ROCm provably never compiles or runs (`Diagnostic.guarded` says why):
    #: not reported, not fixed, listed by `--show-guarded`.
    guarded: list[Diagnostic] = field(default_factory=list)
    #: The targets (cuda2rocm.targets.Targets.settings()) the findings were judged for, one
    #: per distinct configuration of the run (for the JSON and SARIF reports).
    targets: list[dict] = field(default_factory=list)


def _general(rule_id: str, path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    spec = find_rule(rule_id)
    return Diagnostic(
        path=path,
        rule=spec.id,
        code=spec.code,
        severity=spec.severity,
        step=spec.step,
        position=Position(line, column, line, column),
        message=message,
    )


class _Checks(dict):
    """rule id -> its implementation class, imported on first use (a warm, cached run or a
    file with no candidates never imports a front-end)."""

    def __init__(self, rules: dict[str, RuleSpec]) -> None:
        super().__init__()
        self.specs = rules

    def __missing__(self, rule_id: str) -> type:
        cls = importlib.import_module(self.specs[rule_id].check_module).Rule
        self[rule_id] = cls
        return cls


class Linter:
    """Lints sources with a fixed set of rules; builds its prefilter once."""

    def __init__(
        self,
        rules: Sequence[RuleSpec],
        max_bytes: int = sources.DEFAULT_MAX_BYTES,
        ignored_for: Callable[[str], list[str]] | None = None,
        target: str = "portable",
        severity: dict[str, Severity] | None = None,
        torch_built_paths: Callable[[str], bool] | None = None,
        targets=None,
        compile_db=None,
    ) -> None:
        #: Selected rules. Step-0 rules are the tool's own (parse errors, suppressions): those
        #: with tokens take part in the prefilter, the others are always on.
        from cuda2rocm.targets import DEFAULT

        #: The ROCm releases and GPUs findings are judged for (cuda2rocm.targets.Targets).
        self.targets = targets or DEFAULT
        #: Rules whose findings are facts of one wavefront size (their TOML `wavefront`) that
        #: no target runs: only their findings marked `data["wavefront"] == "any"` (a
        #: compile error on every GPU) are kept.
        self.off_wave = frozenset(
            r.id for r in rules if r.wavefront and r.wavefront not in self.targets.wave_sizes
        )
        self.rules = [r for r in rules if r.step != 0 or r.tokens]
        self.selected = {r.id for r in rules}
        self.max_bytes = max_bytes
        self.target = target
        #: path -> selectors of rules switched off for that file (per-file-ignores).
        self.ignored_for = ignored_for
        #: rule id -> severity that replaces the catalogue's (config `severity`).
        self.severity = severity or {}
        #: Folders of sources that a scanned setup.py / load() hands to torch's extension build
        #: (set by the runner from the Python files of the run), and config patterns for more.
        self.torch_built_dirs: frozenset[Path] = frozenset()
        self.torch_built_paths = torch_built_paths
        #: A ROCm build's compilation database (context.compile_db.CompileDb), or None: when
        #: given, the exact answer for membership and build macros (the runner reads it).
        self.compile_db = compile_db
        #: Folders the project's own build hipifies (CMake hipify(), a hipify-perl script the
        #: build runs; set by the runner): name-mapping checks have nothing to ask there.
        self.hipified_dirs: frozenset[Path] = frozenset()
        #: Files a torch extension's sources include that its hipify leaves alone
        #: (context.extension_calls.project_reach), and files a CMake or Cython build
        #: compiles (context.other_builds): what findings there say about the build.
        self.torch_unhipified: frozenset[Path] = frozenset()
        self.other_builds: dict[Path, str] = {}
        #: The oldest torch the project requires (context.torch_floor), None when unstated.
        self.torch_floor: tuple[int, ...] | None = None
        #: C/C++ files the run's Python code reads as text (context.text_sources) -> where.
        self.text_read: dict[Path, str] = {}
        #: The project's own macros (header #defines, build -D flags) for the preprocessor
        #: model: a context.project_macros.ProjectMacros set by the runner, or None.
        self.project_macros = None
        #: Digest of the run-wide context (Python flags, build membership) for cache keys.
        self.context_key = ""
        #: Flags and helpers with a known value on ROCm, per Python module of the run (set by
        #: the runner): `from .utils import IS_ROCM` in another file is understood.
        self.python_index = None
        #: What the run's build files compile only for CUDA, and other accelerators' files
        #: (set by the runner; `cuda2rocm.context.build`).
        self.build_membership = None
        #: Extension attributes a ROCm build never binds (context.extension_attrs), set by
        #: the runner, or None.
        self.extension_bindings = None
        self._checks = _Checks({r.id: r for r in self.rules if r.step != 0})
        self._prefilter: dict[str, tuple[re.Pattern[bytes] | None, list[RuleSpec]]] = {}
        #: language -> (each token with its bytes, pairs of tokens that can overlap).
        self._literals: dict[str, tuple[list, list]] = {}
        self._last_applicable: tuple[str, bytes, list[RuleSpec]] | None = None

    # -- prefilter ---------------------------------------------------------------------------
    def _rules_for(self, language: str) -> tuple[re.Pattern[bytes] | None, list[RuleSpec]]:
        if language not in self._prefilter:
            rules = [r for r in self.rules if language in r.languages or "any" in r.languages]
            if language in CONTEXT_ONLY:
                rules = []  # read for the project's facts only (context.cython_includes)
            tokens = sorted({t for r in rules for t in r.tokens}, key=len, reverse=True)
            always = any(not r.tokens for r in rules)
            pattern = None
            if tokens and not always:
                pattern = re.compile(b"|".join(re.escape(t.encode()) for t in tokens))
                self._literals[language] = (
                    [(t, t.encode()) for t in tokens],
                    _overlapping_pairs(tokens),
                )
            self._prefilter[language] = (pattern, rules)
        return self._prefilter[language]

    def torch_built_for(self, path: str) -> bool:
        """Known to be built by torch's cpp_extension from outside the file itself."""
        from cuda2rocm.build_context import is_torch_built

        if self.torch_built_paths is not None and self.torch_built_paths(path):
            return True
        return is_torch_built(path, self.torch_built_dirs)

    def hipified_for(self, path: str) -> bool:
        """Hipified by the project's own build step (build_context.hipified_dirs)."""
        from cuda2rocm.build_context import is_torch_built

        return is_torch_built(path, self.hipified_dirs)

    def build_note_for(self, path: str) -> str:
        """What the run knows of the build of a file torch's hipify does not rewrite
        (CppContext.build_note): the other build that compiles it, "unhipified", or ""."""
        from cuda2rocm.build_context import resolved_path

        if not (self.other_builds or self.torch_unhipified):
            return ""
        resolved = resolved_path(path)
        if resolved in self.other_builds:
            return self.other_builds[resolved]
        return "unhipified" if resolved in self.torch_unhipified else ""

    def read_as_text_for(self, path: str) -> str:
        """Where the project's Python code reads this file as text ("" when it does not, or
        when a build compiles it: torch's cpp_extension, CMake, Cython)."""
        from cuda2rocm.build_context import resolved_path

        if not self.text_read:
            return ""
        site = self.text_read.get(resolved_path(path), "")
        if not site or self.torch_built_for(path) or self.build_note_for(path) in _BUILDS:
            return ""
        return site

    def _may_embed(self, data: bytes) -> bool:
        return any(t in data for t in _EMBED_TOKENS) and bool(self._rules_for("cuda")[1])

    def wants(self, language: str, data: bytes) -> bool:
        """Whether a file with these bytes needs linting at all (the prefilter's verdict)."""
        if self.applicable(language, data):
            return True
        return language == "python" and self._may_embed(data)

    def applicable(self, language: str, data: bytes) -> list[RuleSpec]:
        """The rules worth running on `data`: those whose tokens occur in it."""
        pattern, rules = self._rules_for(language)
        if pattern is None:
            return rules
        last = self._last_applicable
        if last is not None and last[0] == language and last[1] is data:
            return list(last[2])  # `wants` then `lint_data` ask about the same bytes
        literals, overlapping = self._literals[language]
        # Each token looked for on its own (`in`: C speed, far faster than the alternation
        # tried at every byte) gives what the alternation finds, closed under containment
        # below, unless a present token starts inside another one without being held by it
        # (the alternation then reports only the first): only then is the alternation run.
        found = {t for t, b in literals if b in data}
        if not found:
            result: list[RuleSpec] = []
        else:
            if any(
                a in found and b in found and any(j in data for j in joined)
                for a, b, joined in overlapping
            ):
                found = {m.decode() for m in pattern.findall(data)}
                # The alternation reports the longest token at each place: `cublas` hides
                # the `cu` it contains, so a token inside a found one was found too.
                found |= {t for r in rules for t in r.tokens if any(t in f for f in found)}
            result = [r for r in rules if not r.tokens or found.intersection(r.tokens)]
        self._last_applicable = (language, data, result)
        return list(result)

    # -- linting -----------------------------------------------------------------------------
    def lint_source(
        self, source: SourceFile, rules: Iterable[RuleSpec] | None = None
    ) -> list[Diagnostic]:
        if rules is None:
            rules = self.applicable(source.language, source.text.encode("utf-8", "replace"))
        rules = list(rules)
        if self.ignored_for is not None:
            off = self.ignored_for(source.path)
            rules = [r for r in rules if not any(matches(r, s) for s in off)]
        checks = [r for r in rules if r.step != 0 and source.language in r.languages]
        found: list[Diagnostic] = []
        if checks and source.language == "python":
            found = self._lint_python(source, checks)
        elif checks and source.language == "cuda":
            found = self._lint_cpp(source, checks)
        elif checks and source.language in TEXT_LANGUAGES:
            found = self._lint_text(source, checks)
        if source.language == "python" and any(t.decode() in source.text for t in _EMBED_TOKENS):
            found += self._lint_embedded(source)
        if self.off_wave:
            found = [
                d
                for d in found
                if d.rule not in self.off_wave or (d.data or {}).get("wavefront") == "any"
            ]
        found = self._guard(source, found)
        found = self._suppress(source, found)
        found = merge_same_line(found)
        if self.severity:
            found = [
                dataclasses.replace(d, severity=self.severity[d.rule])
                if d.rule in self.severity
                else d
                for d in found
            ]
        return found

    def _guard(self, source: SourceFile, found: list[Diagnostic]) -> list[Diagnostic]:
        """Mark findings in code ROCm provably never compiles or runs (`Diagnostic.guarded`):
        a file the build compiles only for CUDA or another accelerator's file, or a Python
        branch ROCm never takes."""
        if not found:
            return found
        from cuda2rocm.context import vendor_only

        found = vendor_only.guard(self, source, found)
        if source.language == "requirements" and source.path.endswith("pyproject.toml"):
            from cuda2rocm.context import vendor_extras

            found = vendor_extras.guard(found, source.text, frozenset(NEVER_GUARDED))
        if self.build_membership is not None:
            why = self.build_membership.reason(source.path, source.text)
            if why:
                return [
                    d
                    if d.guarded or d.rule in NEVER_GUARDED
                    else dataclasses.replace(d, guarded=why)
                    for d in found
                ]
        if source.language == "cmake" and self.build_membership is not None:
            reason = self.build_membership.cmake_reason(source.text)
            return [
                d
                if d.guarded or d.rule in NEVER_GUARDED or not reason(d.position.line)
                else dataclasses.replace(d, guarded=reason(d.position.line))
                for d in found
            ]
        if source.language == "python":
            from cuda2rocm.context import python_paths

            try:
                found = python_paths.guard(found, source.text, source.path, self.python_index)
                from cuda2rocm.context import extension_attrs

                return extension_attrs.guard(found, source.text, self.extension_bindings)
            except RecursionError:  # a pathological nesting: report everything
                return found
            except Exception as exc:  # report everything, and the failure
                return [*found, _internal(source.path, "the context model", exc)]
        return found

    def _library_decision(self, path: str, found: list[Diagnostic]) -> list[Diagnostic]:
        """In code that needs CUTLASS / CuTe (context.library_users) one finding stays: the
        library include where the decision is reported; the rest follow it, guarded."""
        pm = self.project_macros
        here = os.path.normpath(path).replace(os.sep, "/")
        if pm is None or here not in pm.library_users or "hip-include" not in self._checks:
            return found  # (without hip-include selected nothing would report the decision)
        why, kept = pm.library_users[here], pm.library_kept.get(here)
        return [
            d
            if d.guarded
            or d.rule in NEVER_GUARDED
            or (d.rule == "hip-include" and d.position.line == kept)
            else dataclasses.replace(d, guarded=why)
            for d in found
        ]

    def _unincluded(self, path: str) -> str:
        """Why no ROCm compile includes this header (context.project_macros), or ""."""
        if self.project_macros is None or not self.project_macros.unincluded:
            return ""
        return self.project_macros.unincluded.get(os.path.normpath(path).replace(os.sep, "/"), "")

    def _suppress(self, source: SourceFile, found: list[Diagnostic]) -> list[Diagnostic]:
        """Apply inline suppressions; report unknown and (opt-in) unused ones."""
        from cuda2rocm import suppressions

        marks = suppressions.parse(source.text, source.language)
        if not marks:
            return found
        catalogue = {r.id: r for r in load_catalogue()}
        found = suppressions.apply(found, marks, catalogue)
        for mark in marks:
            where = suppressions.position(mark)
            unknown = [n for n in mark.names if not any(matches(r, n) for r in catalogue.values())]
            if unknown and "invalid-suppression" in self.selected:
                found.append(
                    _general(
                        "invalid-suppression",
                        source.path,
                        f"unknown rule {', '.join(unknown)} in suppression; "
                        "see `cuda2rocm rules` for ids and codes",
                        where.line,
                        where.column,
                    )
                )
            elif not mark.used and "unused-suppression" in self.selected:
                names = ", ".join(mark.names) or "all rules"
                found.append(
                    _general(
                        "unused-suppression",
                        source.path,
                        f"this suppression ({names}) suppresses nothing; remove it",
                        where.line,
                        where.column,
                    )
                )
        return found

    def _lint_python(self, source: SourceFile, rules: list[RuleSpec]) -> list[Diagnostic]:
        from cuda2rocm.frontends import python

        try:
            pairs = [(r, self._check_class(r, python.PythonRule, "PythonRule")) for r in rules]
            found, failed = python.run_rules(source, pairs)
        except python.PythonParseError as exc:
            return [_general("parse-error", source.path, str(exc), exc.line, exc.column)]
        except Exception as exc:
            return [_internal(source.path, "the Python front-end", exc)]
        found += [_internal(source.path, f"rule {spec.id}", exc) for spec, exc in failed]
        return [self._within_torch_floor(d) for d in found]

    def _within_torch_floor(self, d: Diagnostic) -> Diagnostic:
        """A safe fix that needs a newer torch than the oldest the project requires is offered
        as unsafe, and the message says why. A project that states no floor keeps the fix safe
        (the rule's caveat names the release it needs)."""
        from cuda2rocm.context.torch_floor import version

        needs = d.data.get("needs-torch") if d.data else None
        if needs is None or d.fix is None or d.fix.safety is not Safety.SAFE:
            return d
        floor = self.torch_floor
        if floor is None or floor >= version(needs):
            return d
        stated = ".".join(map(str, floor))
        why = f" (the fix needs torch {needs}; the project allows torch {stated}: unsafe)"
        fix = dataclasses.replace(d.fix, safety=Safety.UNSAFE)
        return dataclasses.replace(d, fix=fix, message=d.message + why)

    def _check_class(self, rule: RuleSpec, base: type, name: str) -> type:
        """The rule's class for one front-end. A rule serving several front-ends has its
        module's `Rule` for one of them and a class named after the base (`PythonRule`,
        `TextRule`) beside it for each other one."""
        cls = self._checks[rule.id]
        if issubclass(cls, base):
            return cls
        return getattr(importlib.import_module(cls.__module__), name)

    def _lint_text(self, source: SourceFile, rules: list[RuleSpec]) -> list[Diagnostic]:
        """Requirements, Dockerfiles, shell scripts, CMake."""
        from cuda2rocm.frontends import text

        try:
            pairs = [(r, self._check_class(r, text.TextRule, "TextRule")) for r in rules]
            found, failed = text.run_rules(source, pairs)
        except Exception as exc:  # the view itself failed: isolate it
            return [_internal(source.path, "the text front-end", exc)]
        found += [_internal(source.path, f"rule {spec.id}", exc) for spec, exc in failed]
        return found

    def _lint_cpp(
        self,
        source: SourceFile,
        rules: list[RuleSpec],
        torch_built: bool | None = None,
        kernel: bool = False,
        jit: bool = False,
    ) -> list[Diagnostic]:
        """tree-sitter recovers from syntax errors: the first one becomes a notice (a
        parse-error diagnostic of severity info, which the runner moves to the notices), since
        the rest of the file is still scanned. Findings on lines that no HIP pass of a ROCm
        build compiles are marked guarded (context.preprocessor)."""
        from cuda2rocm.context import preprocessor
        from cuda2rocm.frontends import cpp

        if torch_built is None and self.torch_built_for(source.path):
            torch_built = True

        def line_model(view):
            if self.project_macros is not None:
                view.rocm_macros = frozenset(self.project_macros.defines.rocm)
                view.wavefront_constants = frozenset(self.project_macros.wavefronts)
                view.mask_free_macros = frozenset(self.project_macros.mask_free_macros)
                view.wide_mask_types = frozenset(self.project_macros.wide_mask_types)
                here = os.path.normpath(source.path).replace(os.sep, "/")
                view.runtime_first = here in self.project_macros.runtime_first
                view.runtime_included = here in self.project_macros.runtime_included
                view.project_names = self.project_macros.ported.get(here, {})
                view.project_sites = self.project_macros.port_sites
                view.hip_only = here in self.project_macros.hip_only
                view.provided_device_functions = frozenset(self.project_macros.device_functions)
                view.fallback_features = frozenset(self.project_macros.fallback_features)
            # A string that defines a kernel goes to the GPU compiler (hipcc or hiprtc on
            # ROCm), whatever file holds it: its passes are those of a .cu file.
            path = source.path + ".cu" if kernel else source.path
            return preprocessor.model(
                source.text, path, bool(view.torch_built), self.project_macros
            )

        try:
            view, found, failed = cpp.run_rules(
                source,
                [(r, self._checks[r.id]) for r in rules],
                cpp.CppContext(
                    self.target,
                    targets=self.targets,
                    torch_built=torch_built,
                    hipified=self.hipified_for(source.path),
                    build_note=self.build_note_for(source.path),
                    jit=jit,
                    read_as_text="" if kernel else self.read_as_text_for(source.path),
                ),
                line_model,
            )
        except Exception as exc:  # parser or traversal failure: isolate it
            return [_internal(source.path, "the C++ front-end", exc)]
        found = _one_per_line(_guard(found, view.line_model))
        unincluded = self._unincluded(source.path)
        if unincluded:  # a header every include site of which the HIP pass skips
            found = [
                d
                if d.guarded or d.rule in NEVER_GUARDED
                else dataclasses.replace(d, guarded=unincluded)
                for d in found
            ]
        found = self._library_decision(source.path, found)
        found += [_internal(source.path, f"rule {spec.id}", exc) for spec, exc in failed]
        if view.first_error is not None:
            start, end = view.span(view.first_error)
            pos = source.lines.position(start, end)
            message = (
                f"C++/CUDA syntax not understood at line {pos.line} (unbalanced code, or a "
                "macro used as syntax); the file was still scanned with error recovery, so "
                "findings near this line may be incomplete"
            )
            error = _general("parse-error", source.path, message, pos.line, pos.column)
            # Guarded like a finding (a header no ROCm compile includes, a line no HIP pass
            # keeps): the runner drops a notice about code ROCm never compiles.
            error = dataclasses.replace(error, severity=Severity.INFO, guarded=unincluded)
            found += _guard([error], view.line_model)
        return found

    def _lint_embedded(self, source: SourceFile) -> list[Diagnostic]:
        """C++ held in the Python file's strings, positioned and fixed in the Python file."""
        from cuda2rocm.frontends import embedded

        off = self.ignored_for(source.path) if self.ignored_for is not None else []
        cuda_rules = [r for r in self._rules_for("cuda")[1] if r.step != 0]
        if not cuda_rules:
            return []
        found: list[Diagnostic] = []
        for literal in embedded.find(source):
            virtual = SourceFile(source.path, "cuda", literal.text)
            rules = self.applicable("cuda", literal.text.encode("utf-8", "replace"))
            rules = [r for r in rules if r.step != 0 and not any(matches(r, o) for o in off)]
            if not rules:
                continue
            found_here = self._lint_cpp(
                virtual,
                rules,
                torch_built=literal.torch_built,
                kernel=literal.kernel,
                jit=literal.kernel and not literal.torch_built,
            )
            for d in found_here:
                if literal.template and d.rule == "parse-error":
                    continue  # placeholders of a JIT template are not C++: expected
                found.append(_from_embedded(d, literal, virtual, source))
        return found

    def syntax_error(self, source: SourceFile) -> str | None:
        """Why `source` does not parse, or None; `fix` refuses to write what fails here."""
        if source.language == "python":
            from cuda2rocm.frontends import python

            try:
                python.parse(source)
            except python.PythonParseError as exc:
                return f"{exc} (line {exc.line})"
        if source.language == "cuda":
            from cuda2rocm.frontends import cpp

            return cpp.syntax_error(source)
        return None

    def lint_file(self, item: Found) -> tuple[list[Diagnostic], Notice | None]:
        data, early = self.read(item)
        if data is None:
            return early
        return self.lint_data(item, data), None

    def read(self, item: Found) -> tuple[bytes | None, tuple[list[Diagnostic], Notice | None]]:
        """The file's bytes, or None and what to report instead (unreadable, binary, large)."""
        _, rules = self._rules_for(item.language)
        if not rules:
            return None, ([], None)
        try:
            with item.path.open("rb") as fh:
                data = fh.read(self.max_bytes + 1)
        except OSError as exc:
            return None, (
                [_general("read-error", item.display, f"cannot read: {exc.strerror}")],
                None,
            )
        if len(data) > self.max_bytes:
            return None, ([], Notice(item.display, f"skipped: larger than {self.max_bytes} bytes"))
        if sources.is_binary(data):
            return None, ([], Notice(item.display, "skipped: binary file (contains NUL bytes)"))
        return data, ([], None)

    def lint_data(self, item: Found, data: bytes) -> list[Diagnostic]:
        if not self.wants(item.language, data):
            return []
        rules = self.applicable(item.language, data)
        try:
            text, encoding, bom = sources.decode(data, item.display, item.language)
        except SourceError as exc:
            return [_general("read-error", item.display, str(exc))]
        source = SourceFile(item.display, item.language, text, encoding, bom)
        return self.lint_source(source, rules)

    def lint_paths(
        self,
        paths: Iterable[str | Path],
        exclude: Iterable[str] = (),
        progress: Callable[[int, int], None] | None = None,
        **discovery,
    ) -> LintResult:
        """Lint every file under `paths`, in this process (the CLI adds the pool and cache)."""
        from cuda2rocm import runner

        return runner.run(self, paths, exclude, jobs=1, progress=progress, **discovery)


_EMBED_TOKENS = (b"load_inline", b"__global__")
_BUILDS = ("CMake", "Cython")  # builds whose include paths the run reads (context.other_builds)


def _overlapping_pairs(tokens: Iterable[str]) -> list[tuple[str, str, tuple[bytes, ...]]]:
    """Tokens `a`, `b` neither of which holds the other, where an end of `a` is a start of `b`,
    with the texts in which `b` starts inside `a` (`ab`, `bc`: `abc`, where the alternation
    finds `ab` and misses `bc`)."""
    tokens = list(tokens)
    pairs = []
    for a in tokens:
        for b in tokens:
            if a == b or a in b or b in a:
                continue
            joined = tuple(
                (a[: len(a) - k] + b).encode()
                for k in range(1, min(len(a), len(b)))
                if a.endswith(b[:k])
            )
            if joined:
                pairs.append((a, b, joined))
    return pairs


#: Rules that report the same construct as another rule: (rule, rule it defers to). A
#: finding of the first is dropped when the second reports the same `library` in the file
#: (CUTLASS/CuTe/WMMA: the include is reported by hip-include, the uses by wmma-cutlass).
_DEFERS_TO = (("wmma-cutlass", "hip-include"),)


def is_recovery_notice(d: Diagnostic) -> bool:
    """A C++ parse-recovery note: not a finding, the runner makes it a `Notice`."""
    return d.rule == "parse-error" and d.severity is Severity.INFO


def _guard(found: list[Diagnostic], model) -> list[Diagnostic]:
    """Mark findings on lines no HIP pass compiles; unknown lines stay reported."""
    if model is None or model.all_live:
        return found
    out = []
    for d in found:
        reason = model.reason(d.position.line)
        if reason and not d.guarded:
            d = dataclasses.replace(d, guarded=f"the HIP pass skips this: {reason}")
        out.append(d)
    return out


def _one_per_line(found: list[Diagnostic]) -> list[Diagnostic]:
    """One construct, one finding: a rule reports a message once per line (fixes of the
    repeats are merged into the first), and a rule deferring to another on the same library
    is dropped."""
    reported = {
        (d.rule, d.data.get("library")) for d in found if not d.guarded and d.data.get("library")
    }
    out: list[Diagnostic] = []
    seen: dict[tuple, int] = {}
    for d in found:
        if any(
            d.rule == rule and (other, d.data.get("library")) in reported
            for rule, other in _DEFERS_TO
        ):
            continue
        key = (d.rule, d.position.line, d.message, d.guarded)
        if key not in seen:
            seen[key] = len(out)
            out.append(d)
            continue
        first = out[seen[key]]
        if d.fix is None or d.fix == first.fix:
            continue
        merged = _union_fix(first.fix, d.fix) if first.fix is not None else None
        if merged is None:
            out.append(d)  # a different fix: keep both rather than lose one
            continue
        out[seen[key]] = dataclasses.replace(first, fix=merged)
    return out


def _union_fix(first: Fix, other: Fix) -> Fix | None:
    """`first` with `other`'s edits added, or None when they conflict (another safety, or
    overlapping edits): then both findings stay, rather than one fix being lost."""
    extra = tuple(e for e in other.edits if e not in first.edits)
    if first.safety != other.safety or first.overlaps(dataclasses.replace(other, edits=extra)):
        return None
    return dataclasses.replace(first, edits=tuple(sorted(set(first.edits) | set(extra))))


def _clause(message: str) -> str:
    """The leading clause of a message, which names its construct (`x` is ..., NAME: ...):
    up to the first `: `, `; ` or `, ` outside backticks and brackets."""
    depth, quoted = 0, False
    for i, ch in enumerate(message):
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in "([{":
            depth += 1
        elif not quoted and ch in ")]}":
            depth = max(depth - 1, 0)
        elif not quoted and not depth and ch in ":;," and message[i + 1 : i + 2] == " ":
            return message[:i]
    return message


def merge_same_line(found: list[Diagnostic]) -> list[Diagnostic]:
    """One construct, one finding: the findings one rule makes on one line for several names
    of the same construct (`cudaDataType_t t = CUDA_R_32F`, `--runtime=nvidia --gpus=all`)
    become the first one, whose message lists the others' leading clauses. Findings with
    fixes merge only when their edits do not overlap and have the same safety (the union of
    the edits is applied, as before); otherwise both are kept."""
    out: list[Diagnostic] = []
    first_of: dict[tuple, int] = {}
    also: dict[int, list[str]] = {}
    for d in found:
        key = (d.path, d.rule, d.position.line, d.severity, d.guarded, d.fix is None)
        if key not in first_of:
            first_of[key] = len(out)
            out.append(d)
            continue
        index = first_of[key]
        first = out[index]
        if d.fix is not None and first.fix is not None:
            merged = _union_fix(first.fix, d.fix)
            if merged is None:
                out.append(d)  # a conflicting fix: keep both rather than lose one
                continue
            out[index] = dataclasses.replace(first, fix=merged)
        clause = _clause(d.message)
        if d.message != first.message and clause not in also.setdefault(index, []):
            also[index].append(clause)
    for index, clauses in also.items():
        if clauses:
            d = out[index]
            out[index] = dataclasses.replace(
                d, message=f"{d.message} (also on this line: {'; '.join(clauses)})"
            )
    return out


def _from_embedded(d: Diagnostic, literal, virtual: SourceFile, source: SourceFile) -> Diagnostic:
    """A diagnostic of C++ in a string, moved to its place in the Python file."""
    p, lines = d.position, virtual.lines
    start = literal.to_file(lines.offset(p.line, p.column - 1))
    end = literal.to_file(lines.offset(p.end_line, p.end_column - 1))
    fix = d.fix
    if fix is not None:
        edits = []
        for e in fix.edits:
            if not literal.can_edit(e.start, e.end, e.replacement) or "cuda2rocm_" in (
                e.replacement.lower()
            ):
                edits = None  # not exact inside this literal, or needs our header: no fix
                break
            # can_edit: no escape inside the span, so the file spells it as the C++ does.
            start, end = literal.to_file(e.start), literal.to_file(e.end)
            edits.append(Edit(start, end, e.replacement, e.original))
        fix = dataclasses.replace(fix, edits=tuple(edits)) if edits else None
    guarded = d.guarded
    if guarded:  # line numbers of the string -> of the Python file

        def file_line(m: re.Match[str]) -> str:
            offset = literal.to_file(lines.offset(int(m[1]), 0))
            return f"at line {source.lines.position(offset, offset).line}"

        guarded = re.sub(r"\bat line (\d+)", file_line, guarded)
    return dataclasses.replace(
        d,
        position=source.lines.position(start, end),
        message=f"{d.message} (C++ in a Python string)",
        fix=fix,
        guarded=guarded,
    )


def _internal(path: str, where: str, exc: BaseException) -> Diagnostic:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return _general(
        "internal-error",
        path,
        f"{where} failed on this file: {type(exc).__name__}: {exc}{origin}; {BUG_HINT}",
    )


__all__ = ["LintResult", "Linter", "Notice"]
