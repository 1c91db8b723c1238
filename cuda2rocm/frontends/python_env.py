"""Environment variables a Python file sets, shared by the environment rules.

A variable is *set* by `os.environ[NAME] = value`, `os.environ.setdefault(NAME, value)`,
`os.putenv(NAME, value)`, a `{NAME: value}` dict given to `os.environ.update(...)`, or a
`{NAME: value}` dict passed as `env=` to a call (`subprocess.run(..., env={...})`), directly
or through a name, or built as `{**os.environ, NAME: value}`. Reading a
variable (`os.environ.get(NAME)`) is not setting it; `os.environ.update(NAME=value)` is not
followed.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ScopeProvider

from cuda2rocm.frontends.python import NameAware, string_value

ENVIRON = "os.environ"
SETTERS = {"os.environ.setdefault", "os.putenv"}


@dataclass(frozen=True)
class EnvWrite:
    name: str
    key: cst.SimpleString
    #: The value expression (None when it is not visible, e.g. `os.environ.update(mapping)`).
    value: cst.BaseExpression | None


def env_write(
    rule: NameAware, key: cst.SimpleString, names: Container[str] | None = None
) -> EnvWrite | None:
    """The write `key` (a string literal) names, if it is the name of a variable being set.

    `names` limits the search to those variables: every other string is dismissed before any
    look at its surroundings (parent and scope metadata cost more than the check itself).
    """
    name = string_value(key)
    if not name or (names is not None and name not in names):
        return None
    parent = rule.parent(key)
    # os.environ["NAME"] = value
    if isinstance(parent, cst.Index):
        element = rule.parent(parent)
        subscript = rule.parent(element) if element is not None else None
        if (
            isinstance(subscript, cst.Subscript)
            and len(subscript.slice) == 1
            and ENVIRON in rule.qualified_names(subscript.value)
        ):
            target = rule.parent(subscript)
            assign = rule.parent(target) if isinstance(target, cst.AssignTarget) else None
            if isinstance(assign, cst.Assign):
                return EnvWrite(name, key, assign.value)
        return None
    # os.environ.setdefault("NAME", value) / os.putenv("NAME", value)
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = rule.parent(parent)
        if (
            isinstance(call, cst.Call)
            and call.args[0] is parent
            and rule.qualified_names(call.func) & SETTERS
        ):
            value = call.args[1].value if len(call.args) > 1 else None
            return EnvWrite(name, key, value)
        return None
    # {"NAME": value} passed as env=... or to os.environ.update(...), or an environment built
    # as {**os.environ, "NAME": value}, or a dict bound to a name later passed as env=...
    if isinstance(parent, cst.DictElement) and parent.key is key:
        mapping = rule.parent(parent)
        if isinstance(mapping, cst.Dict) and _environment(rule, mapping):
            return EnvWrite(name, key, parent.value)
    return None


def _environment(rule: NameAware, mapping: cst.Dict) -> bool:
    for element in mapping.elements:
        if isinstance(element, cst.StarredDictElement) and (
            ENVIRON in rule.qualified_names(element.value)
        ):
            return True
    holder = rule.parent(mapping)
    if isinstance(holder, cst.Arg):
        return _env_argument(rule, holder)
    if isinstance(holder, cst.Assign) and len(holder.targets) == 1:
        target = holder.targets[0].target
        if isinstance(target, cst.Name):
            scope = rule.get_metadata(ScopeProvider, target, None)
            if scope is None:
                return False
            for assignment in scope.assignments[target.value]:
                if getattr(assignment, "node", None) is not target:
                    continue
                for reference in assignment.references:
                    arg = rule.parent(reference.node)
                    if isinstance(arg, cst.Arg) and _env_argument(rule, arg):
                        return True
    return False


def _env_argument(rule: NameAware, arg: cst.Arg) -> bool:
    call = rule.parent(arg)
    if not isinstance(call, cst.Call):
        return False
    if arg.keyword is not None:
        return arg.keyword.value == "env"
    return call.args[0] is arg and "os.environ.update" in rule.qualified_names(call.func)
