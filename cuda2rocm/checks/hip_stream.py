"""hip-stream: CUDA runtime and driver API names (streams, events, memory, errors, ...), and the
cuBLAS names hipBLAS spells `hipblas*` / `HIPBLAS_*` with the same arguments (handles, status
and operation enums, real-valued BLAS calls: the rows of data/cuda_names.tsv declared in hipBLAS
rocm-5.2.3's hipblas.h, see tools/gen_cuda_names.py), and those hipBLAS / hipBLASLt spell so
only from some ROCm release (data/blas_rocm6_names.tsv: cuBLASLt from 6.0, cublasSetMathMode
from 6.1; the compatibility header maps them under a test of that release).

The name table (HIPIFY + torch's hipify, checked against the HIP headers) says whether HIP has
each name. Names with no HIP counterpart are errors everywhere. Supported names are reported
once per file, as a port to do, except in sources torch's cpp_extension hipifies: there nothing
needs to change (renaming by hand would break the CUDA build), so nothing is reported. The
`portable` fix includes the compatibility header, which maps the name under hipcc; the `hip`
fix renames every use.
"""

from __future__ import annotations

import bisect

from cuda2rocm import names
from cuda2rocm.frontends.cpp import CppRule, live_first
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
        for node in view.identifiers:
            if node.type == "field_identifier":
                continue
            i = bisect.bisect_right(starts, node.start_byte) - 1
            if i >= 0 and node.end_byte <= tested[i][1]:
                continue  # a macro an #if tests: nvcc-only-guard / cuda-*-macro speak for it
            name = view.text(node)
            if names.api_name(name) is None:
                continue
            uses.setdefault(name, []).append((*view.span(node), name))
        for token in view.macro_tokens:
            if names.api_name(token.name) is not None:
                uses.setdefault(token.name, []).append((token.start, token.end, token.name))
        has_compat = view.includes_header(self.ctx.compat_header)
        for name, spans in uses.items():
            spans.sort()
            spans = live_first(view, spans)
            row = names.api_name(name)
            times = f" ({len(spans)} uses)" if len(spans) > 1 else ""
            data = {"cuda_name": name}
            if not row.supported:
                why = (
                    f"HIPIFY's {row.hip} is not in the HIP headers"
                    if row.hip
                    else "HIPIFY knows no HIP equivalent"
                )
                self.report(
                    spans[0][:2],
                    f"`{name}` has no HIP counterpart ({why}){times}; this code needs a ROCm path",
                    severity=Severity.ERROR,
                    data=data,
                )
            elif view.torch_built or view.hipified:
                continue  # torch's (or the project's) hipify renames it: nothing to do
            elif self.ctx.target == "hip":
                edits = [Edit(s, e, row.hip, text) for s, e, text in spans]
                safety = Safety.UNSAFE if row.status == "deprecated" else Safety.SAFE
                fix = self.fix(*edits, description=f"rename to {row.hip}", safety=safety)
                self._port(spans[0][:2], name, row, times, fix, data)
            elif not has_compat:
                compat = self.view.compat_include_edit(self.ctx)
                fix = (
                    self.fix(compat, description=f"include {self.ctx.compat_header}")
                    if compat is not None
                    else None  # a file the header may not go into (compat_header.may_include)
                )
                self._port(spans[0][:2], name, row, times, fix, data)

    def _port(self, span, name, row, times, fix, data) -> None:
        deprecated = " (deprecated)" if row.status == "deprecated" else ""
        since = f" (ROCm {row.since} and later)" if row.since else ""
        self.report(
            span,
            f"`{name}` is `{row.hip}`{deprecated} in {_LIBRARY.get(row.library, 'HIP')}{since}"
            f"{times}, "
            "and this file is not built by "
            "torch's cpp_extension (which would hipify it): map it for hipcc",
            fix,
            severity=Severity.WARNING,
            data=data,
        )
