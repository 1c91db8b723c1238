"""hip-stream: CUDA runtime and driver API names (streams, events, memory, errors, ...), and the
cuBLAS names hipBLAS spells `hipblas*` / `HIPBLAS_*` with the same arguments (handles, status
and operation enums, real-valued BLAS calls: the rows of data/cuda_names.tsv declared in
hipBLAS rocm-5.2.3's hipblas.h, see tools/gen_cuda_names.py), and those hipBLAS / hipBLASLt
spell so only from some ROCm release (data/blas_rocm6_names.tsv: cuBLASLt from 6.0,
cublasSetMathMode from 6.1; the compatibility header maps them under a test of that release).

The name table (HIPIFY + torch's hipify, checked against the HIP headers) says whether HIP has
each name. Names with no HIP counterpart are errors everywhere. Supported names are reported at
each line that holds one (frontends/sites.py: the line is the edit), as a port to do, except in
sources torch's cpp_extension hipifies: there nothing needs to change (renaming by hand would
break the CUDA build), so nothing is reported. Names the project defines itself, in this file or
in a project header it includes, in code a HIP pass may compile (context.project_port: its own
compatibility header's `#define cudaStream_t hipStream_t`, `using`, wrappers), are the
project's: no port to do; the definition's own name is never a use. A file that uses such a
name without including its header is still reported, naming the header. The `portable` fix
includes the compatibility header, which maps the name under hipcc; the `hip` fix renames every
use.
"""

from __future__ import annotations

import bisect

from cuda2rocm import names
from cuda2rocm.build_notes import not_hipified
from cuda2rocm.context import project_port
from cuda2rocm.frontends.cpp import CppRule
from cuda2rocm.frontends.sites import by_line
from cuda2rocm.model import Edit, Safety, Severity

#: Where a mapped name lives, when not in the HIP runtime.
_LIBRARY = {"blas": "hipBLAS", "blaslt": "hipBLASLt"}


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        #: name -> (start, end, text) of each use; the text is read from the file's bytes.
        uses: dict[str, list[tuple[int, int, str]]] = {}
        tested = sorted((c.start_byte, c.end_byte) for _, c in view.conditions)
        starts = [t[0] for t in tested]
        own = project_port.own_names(view)  # the file's own definitions (context.project_port)
        ported = view.project_names.keys()  # and its project headers' port
        for node in view.identifiers:
            if node.type == "field_identifier" or node.start_byte in own.defining:
                continue  # a member, or the name a definition declares (a mapping line)
            i = bisect.bisect_right(starts, node.start_byte) - 1
            if i >= 0 and node.end_byte <= tested[i][1]:
                continue  # a macro an #if tests: nvcc-only-guard / cuda-*-macro speak for it
            name = view.text(node)
            if name in ported or names.api_name(name) is None:
                continue
            span = view.span(node)
            if not own.covers(name, span[0]):
                uses.setdefault(name, []).append((*span, name))
        for token in view.macro_tokens:
            name = token.name
            if (
                name in ported
                or names.api_name(name) is None
                or own.covers(name, token.start, True)
            ):
                continue
            uses.setdefault(name, []).append((token.start, token.end, name))
        has_compat = view.includes_header(self.ctx.compat_header)
        missing: list[tuple[int, int, str]] = []
        port: list[tuple[int, int, str]] = []
        for name, spans in uses.items():
            row = names.api_name(name)
            if not row.supported:
                missing += spans
            elif not (view.torch_built or view.hipified):
                port += spans  # else torch's (or the project's) hipify renames it
        # One finding per line that must change (sites.by_line), naming what is on it.
        for line in by_line(view, missing):
            self._missing(line)
        if port and (self.ctx.target == "hip" or not has_compat):
            for line in by_line(view, port):
                self._port_line(line)

    def _missing(self, line: list[tuple[int, int, str]]) -> None:
        parts = []
        for name in dict.fromkeys(t[2] for t in line):
            row = names.api_name(name)
            why = (
                f"HIPIFY's {row.hip} is not in the HIP headers"
                if row.hip
                else "HIPIFY knows no HIP equivalent"
            )
            parts.append(f"`{name}` ({why})")
        has = "has" if len(parts) == 1 else "have"
        self.report(
            line[0][:2],
            f"{', '.join(parts)} {has} no HIP counterpart; this code needs a ROCm path",
            severity=Severity.ERROR,
            data={"cuda_name": line[0][2]},
        )

    def _port_line(self, line: list[tuple[int, int, str]]) -> None:
        name = line[0][2]
        data = {"cuda_name": name}
        if self.ctx.target == "hip":
            edits = [Edit(s, e, names.api_name(t).hip, t) for s, e, t in line]
            unsafe = any(names.api_name(t).status == "deprecated" for _, _, t in line)
            fix = self.fix(
                *edits,
                description="rename to " + ", ".join(dict.fromkeys(e.replacement for e in edits)),
                safety=Safety.UNSAFE if unsafe else Safety.SAFE,
            )
        else:
            compat = self.view.compat_include_edit(self.ctx)
            fix = (
                self.fix(compat, description=f"include {self.ctx.compat_header}")
                if compat is not None
                else None  # a file the header may not go into (compat_header.may_include)
            )
        spelled = list(dict.fromkeys(t[2] for t in line))
        mapped = [_mapping(n) for n in spelled]
        elsewhere = [self.view.project_sites[n] for n in spelled if n in self.view.project_sites]
        hint = (
            f" (the project defines it in `{elsewhere[0]}`, which this file does not include)"
            if elsewhere
            else ""
        )
        self.report(
            line[0][:2],
            f"{'; '.join(mapped)}, and {not_hipified(self.view.build_note)}: map it for "
            f"hipcc{hint}",
            fix,
            severity=Severity.WARNING,
            data=data,
        )


def _mapping(name: str) -> str:
    """`cudaFree` is `hipFree` in HIP: one name's port."""
    row = names.api_name(name)
    deprecated = " (deprecated)" if row.status == "deprecated" else ""
    since = f" (ROCm {row.since} and later)" if row.since else ""
    return f"`{name}` is `{row.hip}`{deprecated} in {_LIBRARY.get(row.library, 'HIP')}{since}"
