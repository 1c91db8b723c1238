"""`cuda2rocm map`: every name of the shipped tables gets an answer; typos get suggestions."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cuda2rocm import mapping, names
from cuda2rocm.cli import main


def test_every_shipped_name_is_answered() -> None:
    known = mapping.known_names()
    assert set(names.table()) <= set(known)
    for name in known:
        m = mapping.lookup(name)
        assert m is not None, name
        assert m.status and m.sources, name
        json.dumps(m.to_json())  # serialisable
        assert name in mapping.render_text(m)


def test_runtime_name_has_hip_torch_rule_and_portable_spelling() -> None:
    m = mapping.lookup("cudaStreamCreate")
    assert m.hip == "hipStreamCreate" and m.torch_hipify == "hipStreamCreate"
    assert m.rules == ["hip-stream"]
    assert "cuda2rocm_compat.h" in m.portable


def test_release_bound_name_carries_since() -> None:
    m = mapping.lookup("cublasLtMatmul")
    assert m.since == "6.0" and "ROCm 6.0" in m.portable


def test_torch_and_hipify_disagreement_is_noted() -> None:
    m = mapping.lookup("CUBLAS_GEMM_DEFAULT_TENSOR_OP")
    assert m.status == "unsupported" and m.torch_hipify == "HIPBLAS_GEMM_DEFAULT"
    assert "vendor-blas-dnn" in m.rules


def test_header_flag_macro_namespace() -> None:
    assert mapping.lookup("cuda_runtime.h").rules == ["hip-include"]
    flag = mapping.lookup("--use_fast_math")
    assert flag.status == "dropped" and not flag.hip and flag.rules == ["nvcc-flags"]
    assert mapping.lookup("-O3").rules == []  # portable: no rule fires
    assert mapping.lookup("__CUDA_ARCH__").status == "undefined on ROCm"
    assert mapping.lookup("__HIP_PLATFORM_HCC__").hip == "__HIP_PLATFORM_AMD__"
    assert mapping.lookup("cuda::barrier").rules == ["libcudacxx-names"]
    assert "vendor-blas-dnn" in mapping.lookup("cudnnCreate").rules


def test_unknown_and_typo() -> None:
    assert mapping.lookup("definitelyNotCuda") is None
    assert "cudaStreamCreate" in mapping.suggest("cudaStreamCreat")
    assert mapping.suggest("CUDASTREAMCREATE") == ["cudaStreamCreate"]


def test_cli_map_text_json_and_errors() -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["map", "cudaMalloc"])
    assert out.exit_code == 0 and "hipMalloc" in out.output
    out = runner.invoke(main, ["map", "cudaMalloc", "--format", "json"])
    assert json.loads(out.output)["hip"] == "hipMalloc"
    out = runner.invoke(main, ["map", "cudaMaloc"])
    assert out.exit_code == 2 and "did you mean" in out.output and "cudaMalloc" in out.output


def test_explain_falls_back_to_map() -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["explain", "cudaStreamCreate", "--format", "json"])
    assert out.exit_code == 0 and json.loads(out.output)["hip"] == "hipStreamCreate"
    out = runner.invoke(main, ["explain", "hip-strem"])
    assert out.exit_code == 2 and "hip-stream" in out.output


def test_catalogue_cache_follows_edits(tmp_path, monkeypatch) -> None:
    """The parsed-catalogue copy (`__pycache__`) is used only while every file is unchanged."""
    import shutil

    from cuda2rocm import catalogue

    monkeypatch.setattr("sys.dont_write_bytecode", False)
    rules = tmp_path / "rules"
    shutil.copytree(catalogue.catalogue_dir(), rules, ignore=shutil.ignore_patterns("__pycache__"))
    first = catalogue._parsed_tomls(rules)
    assert len(list((rules / "__pycache__").glob("catalogue-*.marshal"))) == 1
    assert catalogue._parsed_tomls(rules) == first  # read back from the copy
    path = rules / "nvtx.toml"
    path.write_text(path.read_text().replace('summary = "', 'summary = "Edited. ', 1))
    edited = dict((p.name, d) for p, d in catalogue._parsed_tomls(rules))
    assert edited["nvtx.toml"]["summary"].startswith("Edited. ")
    assert len(list((rules / "__pycache__").glob("catalogue-*.marshal"))) == 1
