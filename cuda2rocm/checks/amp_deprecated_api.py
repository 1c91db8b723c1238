"""amp-deprecated-api: `torch.cuda.amp.*` -> `torch.amp.*` with the device made explicit.

The rewrite must keep behaviour exactly, so it knows the old and new signatures:
`torch.cuda.amp.autocast(enabled, dtype, cache_enabled)` becomes
`torch.amp.autocast("cuda", enabled=..., dtype=..., cache_enabled=...)` (positional arguments
are named, since the new second parameter is `dtype`); `GradScaler` gains a leading `"cuda"`;
`custom_fwd`/`custom_bwd` gain the keyword-only `device_type="cuda"`.

When the old API was imported by name (`from torch.cuda.amp import autocast as ac`), the import
itself is rewritten to `torch.amp`, together with every call site of that import in one fix,
and only when every use of it can be rewritten.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware, dotted, root_name
from cuda2rocm.model import Edit, Fix

OLD = "torch.cuda.amp"
NEW = "torch.amp"
KINDS = ("autocast", "GradScaler", "custom_fwd", "custom_bwd")
#: The torch release that first has each `torch.amp` replacement: `torch.amp.autocast` with
#: torch.autocast (1.10, "new in version 1.10", torch.amp docs); `torch.amp.GradScaler` from
#: 2.3 and `torch.amp.custom_fwd` / `custom_bwd` from 2.4 (pytorch/pytorch "Deprecate
#: device-specific GradScaler autocast API", which added them; the torch.cuda.amp names warn
#: from 2.4).
SINCE = {"autocast": "1.10", "GradScaler": "2.3", "custom_fwd": "2.4", "custom_bwd": "2.4"}
AUTOCAST_PARAMS = ("enabled", "dtype", "cache_enabled")
DEVICE = '"cuda"'


def kind_of(qualified: set[str]) -> str | None:
    for name in qualified:
        if name.startswith(OLD + ".") and name.rsplit(".", 1)[-1] in KINDS:
            kind = name.rsplit(".", 1)[-1]
            if f"{NEW}.{kind}" in qualified:
                # Bound from both modules (`if hasattr(torch.amp, ...)`/`try` import fallback):
                # the old API is only what an old torch gets.
                return None
            return kind
    return None


def _mentions_new_api(node: cst.CSTNode) -> bool:
    """Whether `node` names `torch.amp` (the module whose presence a fallback tests)."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, attr: cst.Attribute) -> bool:
            nonlocal found
            chain = dotted(attr) or ""
            if chain.endswith(".amp") and not chain.endswith(".cuda.amp"):
                found = True
            return not found

        def visit_ImportFrom(self, imp: cst.ImportFrom) -> bool:
            nonlocal found
            module = dotted(imp.module) if imp.module else ""
            if module == NEW or (module or "").startswith(NEW + "."):
                found = True
            return False

    node.visit(Finder())
    return found


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.handled: set[int] = set()
        self.in_import = 0
        self.binding_fixes: dict[int, Fix | None] = {}
        #: id(fix) -> the torch.amp names an import fix rewrites (the newest sets its torch).
        self.binding_kinds: dict[int, set[str]] = {}

    # Imports bind the names; they are rewritten with their uses, never reported on their own.
    def visit_Import(self, node: cst.Import) -> None:
        self.in_import += 1

    def leave_Import(self, node: cst.Import) -> None:
        self.in_import -= 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import += 1

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import -= 1

    def visit_Call(self, node: cst.Call) -> None:
        self._use(node.func)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._use(node.decorator)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.handled.add(id(node.attr))
        self._use(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._use(node)

    # -- reporting -----------------------------------------------------------------------------
    def _use(self, node: cst.CSTNode) -> None:
        if self.in_import or id(node) in self.handled:
            return
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return
        kind = kind_of(self.qualified_names(node))
        if kind is None or self._old_torch_fallback(node):
            return
        self.handled.add(id(node))
        site = self._site_edits(node, kind)
        fix = self._fix_for(node, site)
        new = f'torch.amp.{kind}("cuda", ...)'
        if kind in ("custom_fwd", "custom_bwd"):
            new = f'torch.amp.{kind}(..., device_type="cuda")'
        message = (
            f"torch.cuda.amp.{kind} is deprecated (FutureWarning since torch 2.4); "
            f"use {new}, which behaves the same on CUDA and ROCm"
        )
        if fix is None:
            message += " (no automatic fix: this use cannot be rewritten mechanically)"
        needs = SINCE[kind]
        if fix is not None and fix.description.startswith("import from"):
            needs = max(self.binding_kinds.get(id(fix), {kind}), key=_release, default=kind)
            needs = SINCE[needs]
        self.report(node, message, fix, data={"needs-torch": needs} if fix else None)

    def _old_torch_fallback(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs only when torch lacks the new API: the `else` of
        `if hasattr(torch.amp, ...)` or the handler of a `try` that uses `torch.amp` first.
        Moving it to torch.amp would break exactly the old torch it exists for."""
        child = node
        for parent in self.ancestors(node):
            if isinstance(parent, cst.If) and child is parent.orelse:
                test = parent.test
                if (
                    isinstance(test, cst.Call)
                    and dotted(test.func) == "hasattr"
                    and test.args
                    and _mentions_new_api(test.args[0].value)
                ):
                    return True
            if (
                isinstance(parent, cst.Try)
                and child in parent.handlers
                and _mentions_new_api(parent.body)
            ):
                return True
            child = parent
        return False

    # -- call sites ----------------------------------------------------------------------------
    def _site_edits(self, func: cst.CSTNode, kind: str) -> list[Edit] | None:
        """Edits to the arguments at one use; None when this use cannot be rewritten."""
        parent = self.parent(func)
        if isinstance(parent, cst.Call) and parent.func is func:
            return self._call_edits(parent, kind)
        is_decorator = isinstance(parent, cst.Decorator) and parent.decorator is func
        if is_decorator and kind in ("custom_fwd", "custom_bwd"):
            return [self.insert_after(func, '(device_type="cuda")')]
        return None

    def _call_edits(self, call: cst.Call, kind: str) -> list[Edit] | None:
        args = list(call.args)
        if kind in ("custom_fwd", "custom_bwd"):
            if any(a.keyword and a.keyword.value == "device_type" for a in args):
                return None
            if not args:
                return [self._before_close(call, 'device_type="cuda"')]
            return [self.insert_after(args[-1].value, ', device_type="cuda"')]
        if not args:
            return [self._before_close(call, DEVICE)]
        if kind == "GradScaler":
            return [self.insert_before(args[0], DEVICE + ", ")]
        # autocast: name every positional argument, then put the device first.
        if any(a.star for a in args):
            return None
        positional = [a for a in args if a.keyword is None]
        if len(positional) > len(AUTOCAST_PARAMS):
            return None
        edits = []
        for i, arg in enumerate(positional):
            prefix = (DEVICE + ", " if arg is args[0] else "") + AUTOCAST_PARAMS[i] + "="
            edits.append(self.insert_before(arg, prefix))
        if args[0].keyword is not None:
            edits.append(self.insert_before(args[0], DEVICE + ", "))
        return edits

    def _before_close(self, call: cst.Call, text: str) -> Edit:
        """Insert `text` before the call's closing parenthesis (replacing it, so the edit's
        original, ")", is checked)."""
        _, end = self.span(call)
        return Edit(end - 1, end, text + ")", ")")

    # -- callee and imports --------------------------------------------------------------------
    def _fix_for(self, func: cst.CSTNode, site: list[Edit] | None) -> Fix | None:
        if site is None:
            return None
        root = root_name(func)
        if root is None:
            return None
        root_qualified = self.qualified_names(root)
        chain = dotted(func)
        if "torch" in root_qualified and chain and chain.startswith(root.value + ".cuda.amp."):
            # `torch.cuda.amp.X` through `import torch` (or an alias of it): a local rewrite.
            kind = chain.rsplit(".", 1)[-1]
            callee = self.replace(func, f"{root.value}.amp.{kind}")
            return self.fix(callee, *site, description=f"use torch.amp.{kind}")
        binding, _ = self.references(root)
        if binding is None:
            return None
        key = id(binding)
        if key not in self.binding_fixes:
            self.binding_fixes[key] = self._binding_fix(binding)
        return self.binding_fixes[key]

    def _binding_fix(self, binding: cst.Import | cst.ImportFrom) -> Fix | None:
        """Rewrite an import of the old API and all of its uses, or nothing."""
        import_edit = self._import_edit(binding)
        if import_edit is None:
            return None
        edits = [import_edit]
        kinds: set[str] = set()
        for bound in _bound_names(binding):
            for ref in self._references_of(binding, bound):
                if ref is None:
                    return None
                func = ref
                parent = self.parent(func)
                while isinstance(parent, cst.Attribute) and parent.value is func:
                    func, parent = parent, self.parent(parent)
                kind = kind_of(self.qualified_names(func))
                site = self._site_edits(func, kind) if kind else None
                if site is None:
                    return None
                edits += site
                kinds.add(kind)
        fix = self.fix(*edits, description="import from torch.amp and pass the device")
        self.binding_kinds[id(fix)] = kinds
        return fix

    def _import_edit(self, binding: cst.Import | cst.ImportFrom) -> Edit | None:
        if isinstance(binding, cst.ImportFrom):
            if binding.relative or isinstance(binding.names, cst.ImportStar):
                return None
            module = dotted(binding.module) if binding.module else None
            if module is None:
                return None
            if module == OLD or module.startswith(OLD + "."):
                if all(
                    a.name.value in KINDS for a in binding.names if isinstance(a.name, cst.Name)
                ):
                    return self.replace(binding.module, NEW + module[len(OLD) :])
                return None
            if module == "torch.cuda" and [dotted(a.name) for a in binding.names] == ["amp"]:
                return self.replace(binding.module, "torch")
            return None
        for alias in binding.names:
            if dotted(alias.name) == OLD and alias.asname is not None:
                return self.replace(alias.name, NEW)
        return None

    def _references_of(self, binding: cst.CSTNode, bound: str) -> list[cst.CSTNode | None]:
        from libcst.metadata import ScopeProvider

        scope = self.get_metadata(ScopeProvider, binding, None)
        if scope is None:
            return [None]
        refs: list[cst.CSTNode | None] = []
        for assignment in scope.assignments[bound]:
            if getattr(assignment, "node", None) is binding:
                refs += [r.node for r in assignment.references]
        return refs


def _bound_names(binding: cst.Import | cst.ImportFrom) -> list[str]:
    names = []
    for alias in binding.names if not isinstance(binding.names, cst.ImportStar) else []:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            names.append(alias.asname.name.value)
        elif isinstance(alias.name, cst.Name):
            names.append(alias.name.value)
    return names


def _release(kind: str) -> tuple[int, ...]:
    return tuple(int(p) for p in SINCE[kind].split("."))
