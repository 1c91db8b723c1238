"""The data generators run from a clone: their inputs are pinned (tools/inputs.toml), never a
path of one machine, and regenerating each shipped table from those inputs gives the file that
ships. Where the inputs are not fetched (`python tools/inputs.py fetch`; CI does it best
effort) the regeneration tests skip and say which input is missing."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest
from conftest import ROOT

TOOLS = ROOT / "tools"
REFERENCE = ROOT.parent / "shared" / "reference" / "cuda_to_hip.tsv"
#: A string literal naming an absolute path: a default that holds on one machine only.
MACHINE_PATH = re.compile(r"""["'](/(?:work|tmp|home|root|opt|mnt|Users)/[^"']*)["']""")


def _load(name: str):
    sys.path.insert(0, str(TOOLS))
    try:
        spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(TOOLS))
    return module


def test_no_generator_defaults_to_a_machine_path():
    for path in sorted(TOOLS.glob("*.py")) + sorted(TOOLS.glob("*.sh")):
        code = "\n".join(
            line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")
        )
        assert not MACHINE_PATH.findall(code), path.name


def test_every_revision_a_generator_reads_is_pinned():
    inputs = _load("inputs")
    gen = _load("gen_blas_rocm6_names")
    for _, blas, lt in gen.BLAS_TAGS:
        assert blas in inputs.PINNED["git"]["ROCm/hipBLAS"]["revs"]
        assert lt in inputs.PINNED["git"]["ROCm/hipBLASLt"]["revs"]
    for _, rev in gen.HIP_TAGS:
        assert rev in inputs.PINNED["git"]["ROCm/HIP"]["revs"]
    cuda_names = _load("gen_cuda_names")
    repo, rev, path = cuda_names.HIPBLAS
    assert rev in inputs.PINNED["git"][repo]["revs"] and path in inputs.PINNED["git"][repo]["paths"]
    for repo, spec in inputs.PINNED["git"].items():
        for rev in spec["revs"]:
            # a tag, or a commit in full: an abbreviated hash may become ambiguous
            assert rev.startswith("rocm-") or re.fullmatch(r"[0-9a-f]{40}", rev), (repo, rev)
    with pytest.raises(KeyError):
        inputs.show("ROCm/hipBLAS", "HEAD", "library/include/hipblas.h")


def _need(*names: str):
    inputs = _load("inputs")
    gone = [n for n in inputs.missing() if n in names]
    if not REFERENCE.is_file():
        gone.append(str(REFERENCE))
    if gone:
        pytest.skip("pinned inputs not fetched (python tools/inputs.py fetch): " + ", ".join(gone))


@pytest.mark.parametrize(
    ("generator", "shipped", "needs"),
    [
        ("gen_cuda_names", "cuda_names.tsv", ("ROCm/hipBLAS",)),
        ("gen_blas_names", "blas_names.tsv", ()),
        ("gen_torch_hipify", "torch_hipify.tsv", ()),
    ],
)
def test_regenerating_a_table_gives_the_shipped_file(generator, shipped, needs, tmp_path):
    _need(*needs)
    gen = _load(generator)
    gen.TARGET = tmp_path / shipped
    argv = [generator, str(REFERENCE)]
    assert (gen.main(argv) if generator != "gen_torch_hipify" else gen.main(REFERENCE)) == 0
    assert gen.TARGET.read_text() == (ROOT / "cuda2rocm" / "data" / shipped).read_text()


def test_regenerating_the_rocm6_blas_table_gives_the_shipped_file(tmp_path, monkeypatch):
    _need(
        "ROCm/hipBLAS",
        "ROCm/hipBLASLt",
        "ROCm/hipBLAS-common",
        "ROCm/HIP",
        "nvidia-cublas-cu12",
        "nvidia-cuda-runtime-cu12",
    )
    monkeypatch.setenv("CUDA2ROCM_REFERENCE", str(REFERENCE))
    monkeypatch.delenv("CUBLAS_INCLUDE", raising=False)
    monkeypatch.delenv("CUDA_INCLUDE", raising=False)
    gen = _load("gen_blas_rocm6_names")
    gen.TARGET = tmp_path / "out.tsv"
    with monkeypatch.context() as m:
        m.syspath_prepend(str(TOOLS))
        assert gen.main() == 0
    shipped = ROOT / "cuda2rocm" / "data" / "blas_rocm6_names.tsv"
    assert gen.TARGET.read_text() == shipped.read_text()


def test_an_interrupted_clone_is_not_taken_for_an_input(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA2ROCM_INPUTS", str(tmp_path))
    monkeypatch.delenv("CUDA2ROCM_MIRRORS", raising=False)
    inputs = _load("inputs")
    clone = inputs.git_dir("ROCm/HIP")
    assert clone == tmp_path / "git" / "ROCm+HIP"
    clone.mkdir(parents=True)
    assert "ROCm/HIP" in inputs.missing()  # no marker: fetch did not finish reading it
    (clone / "pinned").write_text("")
    assert "ROCm/HIP" not in inputs.missing()
