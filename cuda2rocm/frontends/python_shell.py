"""Whether a subprocess call only prints: a missing program there is a message, not a failure.

`os.system("nvidia-smi")` (or `subprocess.run("nvidia-smi", shell=True)`) runs the command
through `/bin/sh`: on a host without the program the shell prints "nvidia-smi: not found",
returns 127, and Python carries on. When the call is a statement of its own (its status and
output are thrown away) and nothing asks for the status (`check=True`), nothing breaks on ROCm.
An argv list is different: `subprocess.run(["nvidia-smi"])` raises FileNotFoundError even with
`check=False` (Python's subprocess docs: the exception is raised when the program is not found),
and `check_output`/`check_call`/`getoutput`/`os.popen` hand back output or a status that the
caller reads.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware, string_value

#: Runners whose shell form just returns the exit status.
_STATUS_RUNNERS = {"os.system", "subprocess.run", "subprocess.call"}


def prints_only(rule: NameAware, call: cst.Call) -> bool:
    """`call` runs a shell string whose status and output nobody reads."""
    names = rule.qualified_names(call.func)
    if not names & _STATUS_RUNNERS:
        return False
    parent = rule.parent(call)
    if not isinstance(parent, cst.Expr):
        return False  # assigned, tested, returned, passed on
    args = [a for a in call.args if a.keyword is None]
    if not args or isinstance(args[0].value, (cst.List, cst.Tuple)):
        return False
    if "os.system" in names:
        return True
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    shell = keywords.get("shell")
    if not (isinstance(shell, cst.Name) and shell.value == "True"):
        return False  # a string without shell=True is one program name: FileNotFoundError
    check = keywords.get("check")
    if check is not None and not (isinstance(check, cst.Name) and check.value == "False"):
        return False
    return string_value(args[0].value) is not None or isinstance(args[0].value, cst.FormattedString)
