"""hip-include: CUDA headers, mapped to their HIP counterparts, or errors when there is none.

In sources torch's cpp_extension builds, torch's hipify rewrites mapped includes itself, so they
are informational. Elsewhere the `portable` fix replaces CUDA runtime headers by the
compatibility header (which includes the right headers for each compiler) and the `hip` fix
rewrites the include to the HIP header from the name table. Headers with no HIP counterpart
(WMMA's mma.h, libcu++ `cuda/...`, CUTLASS/CuTe, cuda_pipeline.h) are errors with no fix.
"""

from __future__ import annotations

from cuda2rocm import names
from cuda2rocm.frontends.cpp import CppRule, ancestors, hip_excluded
from cuda2rocm.model import Edit, Severity

#: Not in the name table: headers of CUDA-only APIs (HIP kernel language docs; HIPIFY has no
#: mapping for them).
UNPORTABLE_PREFIXES = ("cuda/", "cutlass/", "cute/")
UNPORTABLE = frozenset({"mma.h", "cuda_pipeline.h", "cuda_pipeline_primitives.h"})
_CONDITIONALS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_else"})
#: Libraries whose headers other rules (or no rule) speak for.
SKIP_LIBRARIES = frozenset(
    {"dnn", "caffe2", "gloo", "nvtx", "nvml", "nccl", "other", "cub", "thrust"}
)


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for inc in view.includes:
            if inc.name == self.ctx.compat_header or hip_excluded(view, inc.node):
                continue
            if self._removed_from_torch(inc) or self._cub_thrust(inc):
                continue
            row = names.header(inc.name)
            if row is None:
                if inc.name in UNPORTABLE or inc.name.startswith(UNPORTABLE_PREFIXES):
                    self._missing(inc, "")
                continue
            if row.library in SKIP_LIBRARIES:
                continue
            if not row.supported:
                self._missing(inc, row.hip)
            elif view.torch_built:
                self.report(
                    (inc.start, inc.end),
                    f"torch's ROCm build hipifies <{inc.name}> to <{row.hip}>; leave it as it is",
                    severity=Severity.INFO,
                    data={"cuda_name": inc.name},
                )
            else:
                self._port(inc, row)

    def _cub_thrust(self, inc) -> bool:
        """CUB and Thrust headers. torch's hipify maps the CUB headers of its table to
        <hipcub/hipcub.hpp> and `cub::` to `hipcub::`, and `thrust/system/cuda` to rocThrust's
        `thrust/system/hip`; other Thrust headers keep their names in rocThrust. Elsewhere
        nothing renames them."""
        name = inc.name
        if name.startswith("cub/"):
            row = names.header(name)
            if self.view.torch_built and row is not None:
                return True  # hipified to <hipcub/hipcub.hpp>
            if self.view.torch_built:
                message = (
                    f"torch's hipify has no mapping for <{name}> (only the CUB headers of its "
                    "table become <hipcub/hipcub.hpp>), so the ROCm build cannot find it; "
                    "include <hipcub/hipcub.hpp> under USE_ROCM"
                )
                severity = Severity.ERROR
            else:
                message = (
                    f"<{name}> is CUB, which ROCm replaces with hipCUB: include "
                    "<hipcub/hipcub.hpp> and use hipcub:: in a ROCm branch (this file is not "
                    "built by torch's cpp_extension, which would rename both)"
                )
                severity = Severity.WARNING
            self.report((inc.start, inc.end), message, severity=severity, data={"cuda_name": name})
            return True
        if name.startswith("thrust/system/cuda/"):
            if not self.view.torch_built:
                hip = name.replace("thrust/system/cuda/", "thrust/system/hip/", 1)
                self.report(
                    (inc.start, inc.end),
                    f"rocThrust spells <{name}> as <{hip}> (and thrust::cuda as thrust::hip); "
                    "this file is not built by torch's cpp_extension, which would rename both",
                    severity=Severity.WARNING,
                    data={"cuda_name": name},
                )
            return True
        return name.startswith("thrust/")

    def _removed_from_torch(self, inc) -> bool:
        """THC and other headers current torch no longer ships (torch 2.13's include tree has
        no THC/ and no ATen/CUDAGeneratorImpl.h); torch's hipify would only rename them."""
        removed: dict[str, str] = self.spec.tables.get("removed_torch_headers", {})
        key = inc.name if inc.name in removed else inc.name.split("/", 1)[0] + "/"
        if key not in removed:
            return False
        if any(a.type in _CONDITIONALS for a in ancestors(inc.node)):
            return True  # `#ifdef OLD_GENERATOR_PATH`: the project switches on torch's version
        self.report(
            (inc.start, inc.end),
            f"<{inc.name}> is not in current PyTorch (so neither torch's ROCm build nor a "
            f"CUDA one finds it); {removed[key]}",
            severity=Severity.ERROR,
            data={"cuda_name": inc.name},
        )
        return True

    def _missing(self, inc, hip: str) -> None:
        note = f" (HIPIFY's <{hip}> is not in the HIP headers)" if hip else ""
        self.report(
            (inc.start, inc.end),
            f"<{inc.name}> has no HIP counterpart{note}; this code needs a ROCm path "
            "(rocWMMA, composable_kernel, hipBLASLt, or a plain fallback under "
            "__HIP_PLATFORM_AMD__)",
            severity=Severity.ERROR,
            data={"cuda_name": inc.name},
        )

    def _port(self, inc, row) -> None:
        fix = None
        if self.ctx.target == "hip":
            path = inc.node.child_by_field_name("path")
            spelled = f"<{row.hip}>" if inc.system else f'"{row.hip}"'
            fix = self.fix(self.replace(path, spelled), description=f"include <{row.hip}>")
        elif names.compat_covers(inc.name):
            compat = self.view.compat_include_edit(self.ctx)
            edits = [compat]
            if compat is None or compat.start != inc.start:
                edits.append(Edit(inc.start, inc.line_end, ""))
            fix = self.fix(*edits, description=f"include {self.ctx.compat_header} instead")
        how = (
            f"the compatibility header {self.ctx.compat_header} includes it for nvcc and "
            f"<{row.hip}> for hipcc"
            if names.compat_covers(inc.name)
            else f"the HIP counterpart is <{row.hip}>; this build needs a ROCm branch"
        )
        self.report(
            (inc.start, inc.end),
            f"<{inc.name}> does not exist on ROCm and this file is not built by torch's "
            f"cpp_extension (which would hipify it): {how}",
            fix,
            severity=Severity.WARNING,
            data={"cuda_name": inc.name},
        )
