"""hip-include: CUDA headers, mapped to their HIP counterparts, or errors when there is none.

In sources torch's cpp_extension builds, torch's hipify rewrites mapped includes itself, so they
are not reported (a finding is an action). Elsewhere the `portable` fix replaces the CUDA
runtime headers by the compatibility header (which includes the runtime for each compiler) and
maps every other header in place, under the conditions it was included under (an include is
never hoisted):

    #if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)
    #include <hip/hip_bf16.h>
    #else
    #include <cuda_bf16.h>
    #endif

CUB headers map to hipCUB (`<hipcub/hipcub.hpp>`, HIPIFY's mapping for every `cub/` header);
the portable branch adds `namespace cub = hipcub;` (a namespace alias may be redeclared to the
same namespace, so two such blocks in one file are fine), the `hip` target renames `cub::` to
`hipcub::`. Thrust mostly needs no rewrite: rocThrust installs the same `thrust/...` headers
and namespace, except `thrust/system/cuda/` (rocThrust's `thrust/system/hip/`) and the
`thrust::cuda::par` / `par_nosync` policies (`thrust::hip::...`; portable: the compatibility
header's `CUDA2ROCM_THRUST_PAR`). The `hip` fix rewrites the include to the HIP header from
the name table (library headers as each library installs them: `<hipblaslt/hipblaslt.h>`, see
data/cuda_names_overrides.tsv). Headers with no HIP counterpart (WMMA's mma.h, libcu++
`cuda/...`, CUTLASS/CuTe, cuda_pipeline.h) are errors with no fix.

A file that uses the CUDA kernel language (`__forceinline__`, `threadIdx`, `__syncthreads`, ...)
without including any runtime header relies on nvcc, which includes cuda_runtime.h in every
CUDA translation unit; hipcc 5.2 does not include hip_runtime.h (measured: "unknown type name
'__forceinline__'", "use of undeclared identifier 'threadIdx'"), so the fix includes it.
"""

from __future__ import annotations

from pathlib import Path

from cuda2rocm import names
from cuda2rocm.build_notes import not_hipified
from cuda2rocm.compat_header import HIP_CONDITION, RUNTIME, THRUST_POLICIES
from cuda2rocm.frontends.cpp import CppRule, Include, ancestors, nodes_of_type
from cuda2rocm.model import Edit, Severity

#: Not in the name table: headers of CUDA-only APIs (HIP kernel language docs; HIPIFY has no
#: mapping for them).
UNPORTABLE_PREFIXES = ("cuda/", "cutlass/", "cute/")
UNPORTABLE = frozenset({"mma.h", "cuda_pipeline.h", "cuda_pipeline_primitives.h"})
_CONDITIONALS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_else"})
#: Libraries whose headers other rules (or no rule) speak for.
#: Headers whose uses wmma-cutlass also reports (it defers to the include: one finding).
LIBRARIES = {"cutlass": "CUTLASS", "cute": "CuTe", "mma.h": "WMMA (nvcuda::wmma)"}
SKIP_LIBRARIES = frozenset({"dnn", "caffe2", "gloo", "nvtx", "nvml", "nccl", "other", "thrust"})
#: Kernel-language names that hip_runtime.h declares and nvcc's implicit include provides.
KERNEL_LANGUAGE = frozenset(
    {
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "warpSize",
        "__syncthreads",
        "__threadfence",
        "__threadfence_block",
        "atomicAdd",
        "atomicCAS",
        "atomicExch",
        "atomicMax",
        "atomicMin",
        "__ldg",
        "__shfl_xor_sync",
        "__shfl_down_sync",
        "__shfl_sync",
        "__ballot_sync",
    }
)
_KEYWORD_NODES = frozenset({"__forceinline__", "__noinline__"})
#: cuBLAS headers that include cuda_bf16.h (cublas_api.h, which the others include).
_CUBLAS_HEADERS = frozenset({"cublas_api.h", "cublas_v2.h", "cublas.h", "cublasLt.h", "cublasXt.h"})
#: Public headers rocThrust rocm-5.3.3 has under both thrust/system/cuda/ and thrust/system/hip/.
_ROCTHRUST_SYSTEM_HEADERS = frozenset(
    {
        "config.h",
        "error.h",
        "execution_policy.h",
        "future.h",
        "memory.h",
        "memory_resource.h",
        "pointer.h",
        "vector.h",
    }
)
#: HIP releases with a usable hip_bf16.h (5.7 on; hipBLAS's version macros come too late).
_HIP_BF16 = "HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR >= 507 || CUDA2ROCM_ROCM_VERSION >= 507"
#: bf16 type spellings (data/cuda_names_overrides.tsv maps them to hip_bf16.h's types).
_BF16_TYPES = frozenset({"__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16", "nv_bfloat162"})
#: HIP headers that declare the kernel language.
_HIP_RUNTIME = frozenset({"hip/hip_runtime.h", "hip_runtime.h"})
#: CUDA headers whose HIP counterpart needs hip_runtime.h included first: HIP 5.2's
#: hip/hip_cooperative_groups.h uses hipBlockDim_x, hipThreadIdx_x, ... (defined by
#: hip_runtime.h) without including it ("use of undeclared identifier 'hipBlockDim_z'").
_NEEDS_RUNTIME = frozenset({"cooperative_groups.h"})


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for inc in view.includes:
            if self._is_compat(inc):
                continue  # (one the HIP pass skips is reported: the engine keeps it guarded)
            if self._project_header(inc):
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
            elif view.torch_built or view.hipified:
                continue  # torch's (or the project's) hipify rewrites it: nothing to do
            else:
                self._port(inc, row)
        if not (view.torch_built or view.hipified):
            self._thrust_policies()
        # Both hipifiers add hip_runtime.h; a run-time compiler's driver supplies its own
        # prelude (hiprtc's builtin header; a JIT that writes the string to a file adds the
        # include it needs); a header whose every includer brought the runtime in first sees
        # it (context.runtime_provided): the file alone does not say the runtime is missing.
        if not (view.torch_built or view.hipified or view.jit):
            self._implicit_runtime()

    def _project_header(self, inc: Include) -> bool:
        """`#include "cuda/scatter_cuda.h"` naming the project's own file beside this one
        (a quoted include is looked up from the including file's folder first): not the
        toolkit header of the same spelling."""
        if inc.system:
            return False
        try:
            return (Path(self.view.source.path).parent / inc.name).is_file()
        except (OSError, ValueError):
            return False

    def _is_compat(self, inc: Include) -> bool:
        header = self.ctx.compat_header
        return inc.name == header or inc.name.endswith("/" + header)

    def _cub_thrust(self, inc) -> bool:
        """CUB and Thrust headers. torch's hipify maps the CUB headers of its table to
        <hipcub/hipcub.hpp> and `cub::` to `hipcub::`, and `thrust/system/cuda` to rocThrust's
        `thrust/system/hip`; other Thrust headers keep their names in rocThrust. Elsewhere
        nothing renames them."""
        name = inc.name
        if name.startswith("cub/"):
            row = names.header(name)
            if self.view.torch_built and name in self.spec.tables["torch_hipify_cub"]["headers"]:
                return True  # hipified to <hipcub/hipcub.hpp>
            if not self.view.torch_built and row is not None and row.supported:
                return False  # ported (with a fix) to <hipcub/hipcub.hpp> by `_port`
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
                    "<hipcub/hipcub.hpp> and use hipcub:: in a ROCm branch "
                    f"({not_hipified(self.view.build_note, 'rename both')})"
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
                    + not_hipified(self.view.build_note, "rename both"),
                    self._thrust_header_fix(inc, hip),
                    severity=Severity.WARNING,
                    data={"cuda_name": name},
                )
            return True
        return name.startswith("thrust/")

    def _thrust_header_fix(self, inc: Include, hip: str):
        """rocThrust's own header, where rocThrust rocm-5.3.3 has the same file under
        thrust/system/hip/ (its public headers; `detail/` and `experimental/` differ)."""
        if hip.rsplit("/", 1)[-1] not in _ROCTHRUST_SYSTEM_HEADERS or hip.count("/") != 3:
            return None
        directive = self.view.source.text[inc.start : inc.end]
        if self.ctx.target == "hip":
            path = inc.node.child_by_field_name("path")
            return self.fix(self.replace(path, f"<{hip}>"), description=f"include <{hip}>")
        block = f"#if {HIP_CONDITION}\n#include <{hip}>\n#else\n{directive}\n#endif"
        return self.fix(
            Edit(inc.start, inc.end, block, directive),
            description=f"include <{hip}> for hipcc, in place",
        )

    def _thrust_policies(self) -> None:
        """`thrust::cuda::par` / `par_nosync`: rocThrust spells them `thrust::hip::par`
        (rocThrust rocm-5.3.3 thrust/system/hip/detail/par.h: `namespace hip { using
        thrust::hip_rocprim::par; ... }`) and has no `thrust::cuda` namespace under hipcc.
        The hip target renames the namespace; the portable one writes the compatibility
        header's `CUDA2ROCM_THRUST_PAR`, which is `thrust::cuda::par` under nvcc."""
        view = self.view
        for node in nodes_of_type(view.tree.root_node, "qualified_identifier"):
            if node.parent is not None and node.parent.type == "qualified_identifier":
                continue
            text = view.text(node)
            spelled = "".join(text.split()).lstrip(":")
            if spelled not in THRUST_POLICIES:
                continue
            policy = THRUST_POLICIES[spelled]
            if self.ctx.target == "hip":
                new = text.replace("cuda", "hip", 1)
                fix = self.fix(self.replace(node, new), description=f"use {new.lstrip(':')}")
            else:
                compat = view.compat_include_edit(self.ctx)
                refused = compat is None and not view.includes_header(self.ctx.compat_header)
                fix = (
                    None
                    if refused
                    else self.fix(
                        self.replace(node, policy),
                        compat,
                        description=f"use {policy} from {self.ctx.compat_header}",
                    )
                )
            self.report(
                node,
                f"rocThrust has no `{spelled}`: it spells it "
                f"`{spelled.replace('cuda', 'hip', 1)}` "
                f"({not_hipified(view.build_note, 'rename it')})",
                fix,
                data={"cuda_name": spelled},
            )

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
        library = LIBRARIES.get(inc.name.split("/", 1)[0] if "/" in inc.name else inc.name, "")
        note = f" (HIPIFY's <{hip}> is not in the HIP headers)" if hip else ""
        self.report(
            (inc.start, inc.end),
            f"<{inc.name}> has no HIP counterpart{note}; this code needs a ROCm path "
            "(rocWMMA, composable_kernel, hipBLASLt, or a plain fallback under "
            "__HIP_PLATFORM_AMD__)",
            severity=Severity.ERROR,
            data={"cuda_name": inc.name, **({"library": library} if library else {})},
        )

    def _port(self, inc: Include, row) -> None:
        text = self.view.source.text
        directive = text[inc.start : inc.end]
        fix = None
        extra = self._brought_along(inc)
        if self.ctx.target == "hip":
            path = inc.node.child_by_field_name("path")
            spelled = f"<{row.hip}>" if inc.system else f'"{row.hip}"'
            edits = [self.replace(path, spelled)]
            if extra:
                edits.append(Edit(inc.end, inc.end, extra, ""))
            if row.library == "cub":
                edits += self._cub_renames()
            fix = self.fix(*edits, description=f"include <{row.hip}>")
        elif names.compat_covers(inc.name):
            fix = self._compat_fix(inc, directive)
        else:
            alias = "\nnamespace cub = hipcub;" if row.library == "cub" else ""
            block = (
                f"#if {HIP_CONDITION}\n#include <{row.hip}>{alias}{extra}\n#else\n{directive}"
                "\n#endif"
            )
            fix = self.fix(
                Edit(inc.start, inc.end, block, directive),
                description=f"include <{row.hip}> for hipcc, in place",
            )
        how = (
            f"the compatibility header {self.ctx.compat_header} includes it for nvcc and "
            f"<{row.hip}> for hipcc"
            if names.compat_covers(inc.name)
            else f"the HIP counterpart is <{row.hip}>"
        )
        self.report(
            (inc.start, inc.end),
            f"<{inc.name}> does not exist on ROCm and {not_hipified(self.view.build_note)}: {how}",
            fix,
            severity=Severity.WARNING,
            data={"cuda_name": inc.name},
        )

    def _brought_along(self, inc: Include) -> str:
        """Includes the CUDA header brings in that its HIP counterpart does not, which the file
        relies on ("" when none): text to append after the HIP include.

        - `cuda_runtime.h` includes `<math.h>` (crt/common_functions.h -> math_functions.h);
          HIP-Clang's runtime wrapper includes only `<cmath>`, so host code calling `isfinite`
          unqualified fails ("no matching function for call to 'isfinite'": only HIP's
          `__device__` overloads are global). The compatibility header adds it for the portable
          target; the hip target's hip_runtime.h gets it here.
        - cuBLAS's `cublas_api.h` includes `<cuda_bf16.h>`; hipBLAS's header includes only the
          older `hip_bfloat16.h`. A file that spells a bf16 type gets `<hip/hip_bf16.h>` where
          HIP has a usable one: HIP 5.7 and later (ROCm/HIP rocm-5.6.0's hip_bf16.h includes an
          amd_hip_bf16.h ROCm/clr rocm-5.6.0 lacks; rocm-5.7.0 defines `__hip_bfloat16` and its
          intrinsics), or where the build names such a release (CUDA2ROCM_ROCM_VERSION). HIP
          5.2 has none, and the file may use bf16 only under its own `#ifdef`.
        """
        if inc.name == "cuda_runtime.h" and self.ctx.target == "hip":
            return "\n#include <math.h>  // cuda_runtime.h includes it; hip_runtime.h does not"
        if inc.name in _CUBLAS_HEADERS and self._spells_bf16():
            from cuda2rocm import facts

            if facts.verdict("hip-bf16", self.ctx.targets) is None:  # every target has it
                return "\n#include <hip/hip_bf16.h>  // cuBLAS's header brings cuda_bf16.h"
            return (
                f"\n#if {_HIP_BF16}  // cuBLAS's header brings cuda_bf16.h"
                "\n#include <hip/hip_bf16.h>\n#endif"
            )
        return ""

    def _spells_bf16(self) -> bool:
        view = self.view
        return any(view.text(n) in _BF16_TYPES for n in view.identifiers)

    def _compat_fix(self, inc: Include, directive: str):
        """The runtime's include becomes the compatibility header's, where it stands."""
        compat = self.view.compat_include_edit(self.ctx)
        if compat is not None and compat.start == inc.start:
            return self.fix(compat, description=f"include {self.ctx.compat_header} instead")
        if compat is None and not self.view.includes_header(self.ctx.compat_header):
            return None  # a file the header may not go into (compat_header.may_include)
        if inc.top_level:
            removal = Edit(
                inc.start, inc.line_end, "", self.view.source.text[inc.start : inc.line_end]
            )
            return self.fix(
                compat, removal, description=f"include {self.ctx.compat_header} instead"
            )
        # Under a condition: stay there (the header's include guard makes repeats harmless).
        replace = Edit(inc.start, inc.end, f'#include "{self.ctx.compat_header}"', directive)
        return self.fix(compat, replace, description=f"include {self.ctx.compat_header} instead")

    def _cub_renames(self) -> list[Edit]:
        view = self.view
        return [
            Edit(*view.span(n), "hipcub", "cub")
            for n in view.identifiers
            if n.type == "namespace_identifier" and view.text(n) == "cub"
        ]

    def _implicit_runtime(self) -> None:
        view = self.view
        if view.runtime_included or any(
            names.compat_covers(inc.name) or inc.name in _HIP_RUNTIME or self._is_compat(inc)
            for inc in view.includes
        ):
            return
        first = next((n for n in view.identifiers if view.text(n) in KERNEL_LANGUAGE), None)
        keyword = _first_keyword(view.tree.root_node)
        needs = next((i.node for i in view.includes if i.name in _NEEDS_RUNTIME), None)
        uses = [n for n in (first, keyword, needs) if n is not None]
        if not uses:
            return
        where = min(uses, key=lambda n: n.start_byte)
        if self.ctx.target == "hip":
            top = [inc for inc in view.includes if inc.top_level]
            at = top[0].start if top else 0
            edit = Edit(at, at, f"#include <{RUNTIME['hip']}>\n#include <math.h>\n", "")
        else:
            edit = view.compat_include_edit(self.ctx)
        fix = self.fix(edit, description="include the runtime") if edit is not None else None
        what = (
            f"`{view.text(where).strip()}`: its HIP counterpart needs the runtime header first, "
            if where is needs
            else f"`{view.text(where)}` comes from the runtime header, "
        )
        message = (
            f"{what}which nvcc includes in every CUDA file and hipcc does not: include "
            f"<{RUNTIME['hip']}> (or the compatibility header)"
        )
        severity = Severity.WARNING
        if view.runtime_first:
            # Every includer of the run brought the runtime in first (runtime_provided): the
            # build compiles; the include only makes the header self-contained.
            severity = Severity.INFO
            message += (
                "; every file of the run that includes this header brings the runtime in "
                "first, so the build compiles as it is: the include makes the header "
                "self-contained"
            )
        self.report(where, message, fix, severity=severity, data={"cuda_name": view.text(where)})


def _first_keyword(root):
    """The first `__forceinline__` / `__noinline__` (keyword nodes of the CUDA grammar)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _KEYWORD_NODES:
            return node
        if node.type in ("comment", "string_literal"):
            continue
        stack.extend(reversed(node.children))
    return None
