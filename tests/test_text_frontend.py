"""The text front-end (requirements, pyproject.toml, Dockerfiles, shell, CMake) and the build,
packaging and environment rules that use it; the nvcc-flags fix evaluated on both platforms."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from conftest import EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda2rocm.catalogue import find_rule, load_catalogue
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.frontends import text
from cuda2rocm.frontends.text import TextView
from cuda2rocm.model import Position
from cuda2rocm.sources import SourceFile

TEXT_RULES = [r for r in load_catalogue() if set(r.languages) & set(text.TEXT_LANGUAGES)]
MINE = [
    "torch-cuda-wheel",
    "cuda-only-packages",
    "rocm-variant-packages",
    "docker-nvidia-base",
    "docker-gpu-flags",
    "nv-cli-tools",
    "nccl-env-vars",
    "visible-devices",
    "rocm-arch-env",
    "cmake-cuda-language",
    "nvcc-flags",
    "cuda-home-gate",
    "vendor-blas-dnn",
]


def view(path: str, language: str, code: str) -> TextView:
    return TextView(SourceFile(path, language, code))


# -- masking -----------------------------------------------------------------------------------
def test_shell_comments_are_masked_but_not_hashes_in_words_or_quotes():
    code = 'echo "a # b" x#y $# ${#ARR[@]} # real comment\nnvidia-smi # c\n'
    v = view("a.sh", "shell", code)
    assert len(v.masked) == len(code)
    assert "real comment" not in v.masked and "# c" not in v.masked
    assert '"a # b" x#y $# ${#ARR[@]}' in v.masked
    assert [c.name for c in v.commands] == ["echo", "nvidia-smi"]


def test_dockerfile_comment_lines_inside_a_continuation_do_not_end_it():
    code = "RUN apt-get update \\\n# a comment line\n    && nvcc --version\nENV A=1\n"
    v = view("Dockerfile", "dockerfile", code)
    assert [kw for kw, *_ in v.instructions] == ["RUN", "ENV"]
    nvcc = next(c for c in v.commands if c.name == "nvcc")
    assert SourceFile("Dockerfile", "dockerfile", code).lines.position(
        nvcc.words[0].start, nvcc.words[0].end
    ) == Position(3, 8, 3, 12)


def test_cmake_bracket_and_line_comments_are_masked_strings_are_not():
    code = 'project(p CXX) #[==[ enable_language(CUDA) ]==]\nmessage("# not a comment")\n# x\n'
    v = view("CMakeLists.txt", "cmake", code)
    assert "enable_language" not in v.masked
    assert '"# not a comment"' in v.masked
    assert [c.name for c in v.cmake_commands] == ["project", "message"]


def test_requirement_comments_need_whitespace_before_the_hash():
    code = "torch==2.3.1+cu121  # pinned\npkg @ https://example.org/p.zip#egg=pkg\n"
    v = view("requirements.txt", "requirements", code)
    assert "pinned" not in v.masked and "#egg=pkg" in v.masked
    assert [(r.key, code[r.start : r.end]) for r in v.requirements()] == [
        ("torch", "torch==2.3.1+cu121")
    ]


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab #\\\"'$(){}[]=;|&\n\r\t-+:/.`")), max_size=80),
    st.sampled_from(
        [
            ("a.sh", "shell"),
            ("Dockerfile", "dockerfile"),
            ("requirements.txt", "requirements"),
            ("pyproject.toml", "requirements"),
            ("CMakeLists.txt", "cmake"),
        ]
    ),
)
def test_view_keeps_offsets_and_rules_never_crash(code, where):
    path, language = where
    v = view(path, language, code)
    assert len(v.masked) == len(code)
    assert all(a == b for a, b in zip(v.masked, code, strict=True) if b in "\r\n")
    linter = Linter(TEXT_RULES)
    found = linter.lint_source(SourceFile(path, language, code), TEXT_RULES)
    assert not [d.message for d in found if d.rule == "internal-error"]


# -- shell structure ---------------------------------------------------------------------------
def test_commands_inside_substitutions_and_after_wrappers():
    code = 'GPUS=$(nvidia-smi -L | wc -l)\nsudo env A=1 nsys profile x\nX="$(ncu --version)"\n'
    v = view("a.sh", "shell", code)
    names = sorted(c.name for c in v.commands)
    assert names == sorted(["", "nvidia-smi", "wc", "nsys", "", "ncu"])
    assert [a.name for a in v.assignments] == ["GPUS", "A", "X"]


def test_pip_install_requirements_and_index_options():
    code = (
        "python3 -m pip install -U --no-cache-dir -r req.txt 'torch==2.4.0+cu124' \\\n"
        "    --extra-index-url=https://download.pytorch.org/whl/cu124 -e . flash-attn\n"
        "uv pip install cupy-cuda12x\n"
    )
    v = view("install.sh", "shell", code)
    assert [r.key for r in v.requirements()] == ["torch", "flash-attn", "cupy-cuda12x"]
    torch = v.requirements()[0]
    assert code[torch.start : torch.end] == "torch==2.4.0+cu124"
    [opt] = v.index_options()
    assert (opt.option, code[opt.start : opt.end]) == (
        "--extra-index-url",
        "https://download.pytorch.org/whl/cu124",
    )


def test_pyproject_positions_point_at_the_dependency_string():
    code = '[project]\nname = "x"\n# "torch==1+cu118"\ndependencies = ["numpy", "torch==1+cu118"]\n'
    v = view("pyproject.toml", "requirements", code)
    torch = next(r for r in v.requirements() if r.key == "torch")
    assert SourceFile("pyproject.toml", "requirements", code).lines.position(
        torch.start, torch.end
    ) == Position(4, 27, 4, 41)


# -- engine ------------------------------------------------------------------------------------
def test_a_text_rule_that_raises_becomes_an_internal_error(monkeypatch):
    spec = find_rule("nv-cli-tools")
    linter = Linter([spec])
    cls = linter._checks[spec.id]

    def boom(self):
        raise RuntimeError("broken rule")

    monkeypatch.setattr(cls, "check", boom)
    found = linter.lint_source(SourceFile("a.sh", "shell", "nvcc --version\n"))
    assert [d.rule for d in found] == ["internal-error"]
    assert "broken rule" in found[0].message


def test_every_rule_of_this_group_fires_on_the_examples():
    result = Linter([r for r in load_catalogue() if r.id in MINE]).lint_paths([str(EXAMPLES)])
    fired = {d.rule for d in result.diagnostics}
    assert set(MINE) <= fired, set(MINE) - fired
    assert not [d for d in result.diagnostics if d.rule == "internal-error"]


# -- nvcc-flags: evaluate the selected list on CUDA and on ROCm ----------------------------------
def _namespace(module: cst.Module) -> dict:
    """Module-level `NAME = <literal expression>` bindings, evaluated without running the file."""
    namespace: dict = {"__helpers__": []}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):  # helpers that return flag lists
            namespace["__helpers__"].append(module.code_for_node(statement))
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name):
                    try:
                        node = ast.parse(module.code_for_node(small.value), mode="eval")
                        namespace[target.value] = eval(
                            compile(node, "<flags>", "eval"), {"__builtins__": {}}, dict(namespace)
                        )
                    except Exception:
                        pass
    return namespace


def _flag_expressions(code: str) -> list[tuple[str, dict]]:
    module = cst.parse_module(code)
    found: list[str] = []

    class Finder(cst.CSTVisitor):
        def visit_DictElement(self, node: cst.DictElement) -> None:
            if isinstance(node.key, cst.SimpleString) and node.key.evaluated_value == "nvcc":
                found.append(module.code_for_node(node.value))

        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None and node.keyword.value == "extra_cuda_cflags":
                found.append(module.code_for_node(node.value))

    module.visit(Finder())
    return [(expr, _namespace(module)) for expr in found]


def _evaluate(expr: str, namespace: dict, hip: bool) -> list[str]:
    class Ext:  # `cpp_ext.IS_HIP_EXTENSION`
        IS_HIP_EXTENSION = hip

    scope = dict(namespace, IS_HIP_EXTENSION=hip, cpp_ext=Ext, __builtins__={})
    for helper in namespace.get("__helpers__", []):  # `"nvcc": fast_opts()`
        exec(helper, scope)
    return list(eval(expr, scope))


NVCC_ONLY = ("-gencode", "-arch", "--use_fast_math", "-Xptxas", "-lineinfo", "--expt", "--threads")


@pytest.mark.parametrize(
    "example",
    [e for e in find_rule("nvcc-flags").invalid if e.fixed is not None]
    + [
        type(
            "Sample",
            (),
            {"code": (EXAMPLES / "setup.py").read_text(), "path": "setup.py", "name": "sample"},
        )
    ],
    ids=lambda e: e.name,
)
def test_nvcc_flags_fix_is_unchanged_on_cuda_and_hipcc_clean_on_rocm(example):
    spec = find_rule("nvcc-flags")
    linter = Linter([spec])
    source = SourceFile(example.path, "python", example.code.lstrip("\n"))
    fixed = fix_source(source, linter.lint_source).fixed
    before = _flag_expressions(source.text)
    after = _flag_expressions(fixed)
    assert after and len(after) == len(before)
    changed = 0
    for (expr, namespace), (original, old) in zip(after, before, strict=True):
        try:
            cuda_flags = _evaluate(original, old, hip=False)
        except Exception:
            continue  # not a literal list (os.environ[...]): no fix was offered
        assert _evaluate(expr, namespace, hip=False) == cuda_flags
        rocm_flags = _evaluate(expr, namespace, hip=True)
        if expr != original or namespace["__helpers__"] != old["__helpers__"]:
            changed += 1
            assert not [f for f in rocm_flags if f.startswith(NVCC_ONLY)], rocm_flags
            assert "-O3" in rocm_flags or "-O2" in rocm_flags
    assert changed


def test_nvcc_flags_fix_keeps_portable_flags_and_drops_fast_math():
    """`--use_fast_math` is dropped on the HIP side, not mapped to `-ffast-math`: clang's flag
    also assumes no NaN/Inf operands (-ffinite-math-only), which nvcc's does not."""
    flags = '"-O3", "-DX=1", "--use_fast_math", "-Xcompiler", "-fPIC", "-arch=sm_80"'
    code = f'import torch\nx = {{"nvcc": [{flags}]}}\n'  # a torch build script: may import
    linter = Linter([find_rule("nvcc-flags")])
    fixed = fix_source(SourceFile("setup.py", "python", code), linter.lint_source).fixed
    [(expr, namespace)] = _flag_expressions(fixed)
    assert _evaluate(expr, namespace, hip=True) == ["-O3", "-DX=1", "-fPIC"]
    assert fixed.startswith(
        "import torch\nfrom torch.utils.cpp_extension import IS_HIP_EXTENSION\n"
    )
