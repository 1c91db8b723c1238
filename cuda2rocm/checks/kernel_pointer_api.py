"""kernel-pointer-api: `cudaFuncSetAttribute(kernel, ...)` with a kernel, not a `const void*`.

CUDA's runtime header adds template overloads (`template <class T> cudaFuncSetAttribute(T*
entry, ...)`) so a kernel can be passed directly. HIP 5.2 declares only the C functions taking
`const void*` for hipFuncSetAttribute, hipFuncGetAttributes and hipFuncSetCacheConfig, so hipcc
fails: "no matching function for call to 'hipFuncSetAttribute'". The occupancy functions have
template overloads in HIP and are not reported.

The safe fix casts the kernel, `reinterpret_cast<const void*>(kernel)`: CUDA's template overload
does exactly that cast before calling the C function, so nothing changes under nvcc.
"""

from __future__ import annotations

from cuda2rocm.frontends.cpp import CppRule, identifiers, initializations

#: function name -> index of its kernel argument.
FUNCTIONS = {
    "cudaFuncSetAttribute": 0,
    "cudaFuncGetAttributes": 1,
    "cudaFuncSetCacheConfig": 0,
    "hipFuncSetAttribute": 0,
    "hipFuncGetAttributes": 1,
    "hipFuncSetCacheConfig": 0,
}
_NAMES = frozenset({"identifier", "qualified_identifier", "template_function"})


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for call in view.calls:
            fn = call.child_by_field_name("function")
            if fn is None or fn.type not in ("identifier", "qualified_identifier"):
                continue
            name = view.text(fn).rsplit("::", 1)[-1]
            if name not in FUNCTIONS:
                continue
            args_node = call.child_by_field_name("arguments")
            args = [a for a in args_node.named_children if a.type != "comment"]
            index = FUNCTIONS[name]
            if len(args) <= index:
                continue
            kernel = args[index]
            if kernel.type not in _NAMES or not _is_kernel(view, kernel):
                continue
            text = view.text(kernel)
            hip = name.replace("cuda", "hip", 1)
            self.report(
                kernel,
                f"HIP (checked: 5.2 through 6.2.2) declares `{hip}` with a `const void*` "
                "function only (no template "
                f'overload for kernels), so hipcc fails with "no matching function for call '
                f"to '{hip}'\"; pass `reinterpret_cast<const void*>({text})`",
                self.fix(
                    self.replace(kernel, f"reinterpret_cast<const void*>({text})"),
                    description="cast the kernel to const void*",
                ),
            )


def _is_kernel(view, node) -> bool:
    """The argument names a `__global__` function of this file, or a variable initialised with
    one (`auto kernel = &ln_fwd_kernel<T>;`, `auto k = use_a ? a : b;`) in the same function."""
    name = view.text(node).split("<", 1)[0].rsplit("::", 1)[-1]
    if name in _kernels(view):
        return True
    return node.type == "identifier" and _kernel_variable(view, node)


def _kernel_variable(view, node) -> bool:
    scope = node.parent
    while scope is not None and scope.type not in ("function_definition", "translation_unit"):
        scope = scope.parent
    if scope is None:
        return False
    name = view.text(node)
    for decl in view.declarations:
        if not (scope.start_byte <= decl.start_byte < node.start_byte):
            continue
        for target, value in initializations(decl):
            if view.text(target).lstrip("*& ") != name:
                continue
            # A kernel of this file, or the address of a function template instance (a kernel
            # declared in a header: nothing else goes to these functions).
            return any(view.text(n) in _kernels(view) for n in identifiers(value)) or (
                value.type == "pointer_expression"
                and value.child_by_field_name("argument") is not None
                and value.child_by_field_name("argument").type == "template_function"
            )
    return False


def _kernels(view) -> set[str]:
    cached = getattr(view, "_kernel_names", None)
    if cached is not None:
        return cached
    names: set[str] = set()
    stack = [view.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "declaration") and any(
            c.type == "__global__" for c in node.children
        ):
            decl = node.child_by_field_name("declarator")
            while decl is not None and decl.type != "function_declarator":
                decl = decl.child_by_field_name("declarator")
            if decl is not None:
                inner = decl.child_by_field_name("declarator")
                if inner is not None:
                    names.add(view.text(inner).rsplit("::", 1)[-1])
            continue
        stack.extend(node.children)
    view._kernel_names = names
    return names
