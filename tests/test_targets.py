"""Targets (`rocm-version`, `offload-arch`) and the facts they select (data/facts.toml).

Each release-dependent fact is linted on both sides of its boundary; a fact without a range or
a source fails here; wave32-only targets get no 64-lane finding or rewrite.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cuda2rocm import compat_header, facts
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.config import ConfigError, load_file
from cuda2rocm.engine import Linter
from cuda2rocm.sources import SourceFile
from cuda2rocm.targets import DEFAULT, TargetError, Targets, parse_release, wavefront

ROOT = Path(__file__).resolve().parent.parent
RULES = {r.id: r for r in load_catalogue()}


def lint(rule: str, code: str, rocm: str | None = None, arch: list[str] | None = None):
    linter = Linter([RULES[rule]], targets=Targets.parse(rocm, arch))
    found = linter.lint_source(SourceFile("k.cu", "cuda", code))
    return [d for d in found if d.rule == rule and not d.guarded]


# -- the settings ----------------------------------------------------------------------------
def test_releases_and_wavefronts_parse():
    assert parse_release("6.2") == (6, 2)
    assert [wavefront(a) for a in ("gfx906", "gfx90a", "gfx942", "gfx950")] == [64] * 4
    assert [wavefront(a) for a in ("gfx1030", "gfx1100", "gfx1151", "gfx1201")] == [32] * 4
    assert wavefront("gfx90a:xnack+") == 64
    for bad in ("6", "six.two", "6.2.1"):
        with pytest.raises(TargetError):
            parse_release(bad)
    for bad in ("sm_80", "gfx", "gfx13000"):
        with pytest.raises(TargetError):
            wavefront(bad)


def test_defaults_are_the_current_pytorch_rocm_wheels():
    """data/targets.toml: ROCM_ARCHES = ["7.0", "7.1"], PYTORCH_ROCM_ARCH of the builder."""
    assert DEFAULT.rocm_version == "7.0"
    assert {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"} <= set(DEFAULT.arches)
    assert DEFAULT.wave_sizes == {32, 64}


def test_verdicts_name_the_targets_a_fact_holds_for():
    t = Targets.parse("6.2", ["gfx942", "gfx1100"])
    assert t.before((6, 2)) is None and t.before((7, 0)) == "on ROCm < 7.0"
    assert t.from_release((7, 0)) == "on ROCm >= 7.0"
    assert Targets.parse("7.0", None).from_release((7, 0)) == ""
    assert Targets.parse("6.2..6.4", None).from_release((7, 0)) is None
    assert Targets.parse("5.2..6.1", None).before((6, 2)) == ""
    assert t.on_wave(64) == "on wave64 GPUs only (gfx942)"
    assert Targets.parse(None, ["gfx1100"]).on_wave(64) is None
    with pytest.raises(TargetError):
        Targets.parse("7.0..6.2", None)


def test_config_keys_are_validated(tmp_path):
    good = tmp_path / "cuda2rocm.toml"
    good.write_text('rocm-version = "6.2"\noffload-arch = ["gfx942", "gfx1100"]\n')
    config = load_file(good)
    assert config.targets() == Targets((6, 2), None, ("gfx942", "gfx1100"))
    assert config.settings()["rocm-version"] == "6.2"
    for text, words in (
        ('rocm-version = "6"\n', "MAJOR.MINOR"),
        ('offload-arch = ["sm_90"]\n', "gfx target"),
        ("offload-arch = 942\n", "list of gfx targets"),
    ):
        good.write_text(text)
        with pytest.raises(ConfigError, match=words):
            load_file(good)


def _project(write) -> Path:
    write(
        "p/pyproject.toml", '[tool.cuda2rocm]\nrocm-version = "6.2"\noffload-arch = ["gfx1100"]\n'
    )
    write("p/sub/cuda2rocm.toml", 'offload-arch = ["gfx942"]\n')
    code = "__global__ void k(int* o) { o[threadIdx.x % 32] = 1; }\n"
    write("p/a.cu", code)
    write("p/sub/b.cu", code)
    return write("p/a.cu", code).parent


def test_per_file_targets_decide_the_64_lane_findings(write, cli):
    """The nearest configuration decides: gfx1100 only (wave32) reports no warp-size-32,
    the sub-folder's gfx942 does."""
    root = _project(write)
    done = cli("lint", "--format", "json", "--select", "warp-size-32", str(root))
    report = json.loads(done.stdout)
    assert {Path(d["path"]).name for d in report["diagnostics"]} == {"b.cu"}
    assert {"rocm-version": "6.2", "offload-arch": ["gfx1100"]} in report["targets"]
    assert {"rocm-version": "7.0", "offload-arch": ["gfx942"]} in report["targets"]
    # the command line replaces every file's targets
    done = cli("lint", "--format", "json", "--offload-arch", "gfx90a", str(root / "a.cu"))
    assert any(d["rule"] == "warp-size-32" for d in json.loads(done.stdout)["diagnostics"])


def test_show_settings_and_sarif_record_the_targets(write, cli):
    root = _project(write)
    shown = cli("lint", "--show-settings", str(root / "a.cu"), "--rocm-version", "6.4").stdout
    assert "rocm-version = '6.4'  # command line" in shown
    assert re.search(r"offload-arch = \['gfx1100'\]  # .*pyproject.toml", shown)
    sarif = json.loads(cli("lint", "--format", "sarif", str(root / "a.cu")).stdout)
    assert sarif["runs"][0]["properties"]["targets"] == [
        {"rocm-version": "6.2", "offload-arch": ["gfx1100"]}
    ]
    bad = cli("lint", "--offload-arch", "sm_80", str(root))
    assert bad.returncode == 2 and "sm_80" in bad.stderr


# -- facts as data ---------------------------------------------------------------------------
def test_every_fact_has_a_range_and_a_source():
    for key, fact in facts.load().items():
        assert fact.source, f"{key}: no source"
        assert fact.since or fact.until or fact.wavefront, f"{key}: no since/until/wavefront"
        assert fact.what, key


def test_every_fact_a_check_names_exists_and_every_fact_is_read():
    """A fact nobody reads is dead data; a name nobody defines is a typo."""
    text = "\n".join(
        p.read_text() for p in (ROOT / "cuda2rocm").rglob("*.py") if p.name != "facts.py"
    )
    named = set(re.findall(r'verdict\(\s*"([\w-]+)"', text))
    named |= set(re.findall(r':\s*"(cg-[\w-]+)"', text))
    named |= set(re.findall(r'FACT = "([\w-]+)"', text))
    known = set(facts.load())
    assert named <= known, named - known
    # lane-mask-64 / warp-size-64 are also the `wavefront = 64` of whole rules
    assert known - named <= {"lane-mask-64"}, known - named


def test_messages_make_no_unranged_release_claims():
    """Messages of checks that read facts name releases from the data, not 'HIP 5.2'."""
    for module in ("cooperative_groups", "warp_mask_32bit"):
        text = (ROOT / "cuda2rocm" / "checks" / f"{module}.py").read_text()
        strings = re.findall(r'f?"[^"\n]*"', text)
        assert not [s for s in strings if "HIP 5.2" in s or "ROCm 6.2 has" in s], module


# -- each fact on both sides of its boundary -------------------------------------------------
CG = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
#: fact -> (rule, code that uses the API, the release before the boundary, the boundary)
BOUNDARIES = {
    "cg-group-dim": (
        "cooperative-groups",
        CG + "__global__ void k(int* o) { cg::thread_block b = cg::this_thread_block();"
        " o[0] = b.group_dim().x; }\n",
    ),
    "cg-meta-group": (
        "cooperative-groups",
        CG + "__global__ void k(int* o) { auto t = cg::tiled_partition<4>(cg::this_thread_block());"
        " o[0] = t.meta_group_rank(); }\n",
    ),
    "cg-num-threads": (
        "cooperative-groups",
        CG + "__global__ void k(int* o) { cg::thread_block b = cg::this_thread_block();"
        " o[0] = b.num_threads(); }\n",
    ),
    "cg-tile-votes": (
        "cooperative-groups",
        CG + "__global__ void k(int* o) { auto t = cg::tiled_partition<8>(cg::this_thread_block());"
        " o[0] = t.any(o[1]) + t.match_any(o[2]); }\n",
    ),
    "cg-binary-partition": (
        "cooperative-groups",
        CG + "__global__ void k(int* o) { auto g = cg::coalesced_threads();"
        " o[0] = cg::binary_partition(g, o[1] > 0).size(); }\n",
    ),
    "cg-reduce": (
        "cooperative-groups",
        CG + "__global__ void k(int* o) { auto t = cg::tiled_partition<8>(cg::this_thread_block());"
        " o[0] = cg::reduce(t, o[1], cg::plus<int>()); }\n",
    ),
    "syncwarp": ("warp-mask-32bit", "__global__ void k() { __syncwarp(); }\n"),
    "device-prop-smem-optin": (
        "device-limits",
        "int f(hipDeviceProp_t p) { return p.sharedMemPerBlockOptin; }\n",
    ),
    "half2-members-half": (
        "half-members",
        "#include <cuda_fp16.h>\n__device__ float f(__half2 h) { float a = h.y; return a; }\n",
    ),
}


def _before(release: tuple[int, int]) -> str:
    major, minor = release
    return f"{major}.{minor - 1}" if minor else f"{major - 1}.9"


@pytest.mark.parametrize("key", sorted(BOUNDARIES))
def test_a_since_fact_is_reported_only_below_its_release(key):
    rule, code = BOUNDARIES[key]
    since = facts.fact(key).since
    below = lint(rule, code, _before(since), ["gfx942"])
    assert below, f"{key}: nothing reported on ROCm {_before(since)}"
    assert all(f"ROCm {since[0]}.{since[1]}" in d.message for d in below), below
    assert lint(rule, code, f"{since[0]}.{since[1]}", ["gfx942"]) == []


def test_every_since_fact_of_an_api_has_a_boundary_test():
    ranged = {k for k, f in facts.load().items() if f.since}
    # hip-bf16: a fix, activemask / warp-sync-builtins: wave32 and message tests below
    assert ranged - set(BOUNDARIES) <= {"hip-bf16", "activemask", "warp-sync-builtins"}


#: fact -> (rule, code that breaks from the fact's `until` release on)
UNTIL = {
    "warpsize-constexpr": (
        "warpsize-constexpr",
        "__global__ void k(float* x) { __shared__ float s[warpSize]; x[0] = s[0]; }\n",
    ),
    "amdgcn-wavefront-size": (
        "amdgcn-wavefront-size",
        "#if __AMDGCN_WAVEFRONT_SIZE == 64\n#define W 64\n#endif\n",
    ),
}


@pytest.mark.parametrize("key", sorted(UNTIL))
def test_an_until_fact_is_reported_once_the_range_reaches_its_release(key):
    rule, code = UNTIL[key]
    until = facts.fact(key).until
    last = _before(until)
    assert lint(rule, code, f"6.0..{last}") == []  # every supported release is older
    assert lint(rule, code, "6.0")  # the open range reaches 7.x
    assert lint(rule, code, f"{until[0]}.{until[1]}")


def test_every_until_fact_has_a_boundary_test():
    assert {k for k, f in facts.load().items() if f.until} == set(UNTIL)


def test_sync_builtins_message_follows_the_release():
    code = "__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n"
    old = lint("warp-mask-32bit", code, "6.4", ["gfx942"])
    new = lint("warp-mask-32bit", code, "7.0", ["gfx942"])
    assert "HIP_ENABLE_WARP_SYNC_BUILTINS" in old[0].message
    assert "HIP_ENABLE_WARP_SYNC_BUILTINS" not in new[0].message
    assert "static_assert a 64-bit" in new[0].message


def test_activemask_in_32_bits_on_wave32_is_quiet_only_where_hip_declares_it():
    code = "__device__ int f() { unsigned m = __activemask(); return __popc(m); }\n"
    assert lint("warp-mask-32bit", code, "6.2", ["gfx1100"]) == []
    assert lint("warp-mask-32bit", code, "6.1", ["gfx1100"])
    assert lint("warp-mask-32bit", code, "6.2", ["gfx90a"])


# -- wave32-only targets ---------------------------------------------------------------------
LANES = """\
__global__ void k(float* x, unsigned long long* out) {
  int lane = threadIdx.x % 32;
  int warp = threadIdx.x / 32;
  unsigned m = __activemask();
  out[warp] = __popc(m) + lane;
}
"""


@pytest.mark.parametrize("rule", ["warp-size-32", "warp-mask-32bit", "warp-literal-mix"])
def test_wave32_only_targets_report_no_64_lane_finding(rule):
    assert lint(rule, LANES, "7.0", ["gfx1100", "gfx1201"]) == []


def test_wave64_targets_still_report_them():
    assert lint("warp-size-32", LANES, "7.0", ["gfx942"])
    assert lint("warp-mask-32bit", LANES, "7.0", ["gfx942"])


def test_wave32_only_targets_get_no_64_lane_rewrite(tmp_path, cli):
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "cuda2rocm.toml").write_text('offload-arch = ["gfx1100"]\n')
    (folder / "k.cu").write_text(LANES)
    warp = "warp-size-32,warp-mask-32bit,warp-literal-mix,warp-queue-ladder"
    done = cli("fix", "--unsafe", "--exit-zero", "--select", warp, str(folder))
    assert done.returncode == 0, done.stderr
    assert (folder / "k.cu").read_text() == LANES
    # the same on a wave64 target is rewritten
    (folder / "cuda2rocm.toml").write_text('offload-arch = ["gfx942"]\n')
    cli("fix", "--unsafe", "--exit-zero", "--select", warp, str(folder))
    assert "CUDA2ROCM_WARP_SIZE" in (folder / "k.cu").read_text()


# -- the compatibility header writes only what the targets need ------------------------------
def test_compat_header_maps_without_release_tests_what_every_target_has():
    used = {"CUBLAS_COMPUTE_32F", "cooperative_groups/reduce.h"}
    old = compat_header.render(used, oldest=502)
    assert "#if CUDA2ROCM_ROCM_VERSION >= 600" in old and "CUDA2ROCM_CG_REDUCE" in old
    new = compat_header.render(used, oldest=700)
    assert "#if CUDA2ROCM_ROCM_VERSION >= 600" not in new
    assert "#define CUBLAS_COMPUTE_32F" in new and "CUDA2ROCM_CG_REDUCE" in new
    assert "CUDA2ROCM_CG_REDUCE" not in compat_header.render(used, oldest=713)


# -- the rule file is the whole contract -------------------------------------------------------
def test_an_example_states_only_assumptions_the_tool_knows():
    from cuda2rocm.catalogue import CatalogueError, parse_rule

    base = {
        "id": "x-rule", "code": "CR499", "step": 4, "severity": "error",
        "languages": ["cuda"], "fix": "none", "summary": "s", "explanation": "e",
        "references": [{"title": "t", "url": "u"}],
    }  # fmt: skip
    for bad in (
        {"rocm-version": "seven"},
        {"offload-arch": ["sm_90"]},
        {"target": "rocm"},
        {"severity": "fatal"},
        {"message": "a string, not a list"},
    ):
        with pytest.raises(CatalogueError):
            parse_rule({**base, "invalid": [{"code": "x", **bad}]}, "x-rule.toml")
    ok = parse_rule({**base, "invalid": [{"code": "x", "rocm-version": "6.2"}]}, "x-rule.toml")
    assert ok.invalid[0].rocm_version == "6.2"


def test_a_stated_severity_or_message_that_does_not_hold_fails_the_examples():
    """test_rule_examples checks what an example states: a change of severity or of the
    message's key words fails the rule's own examples."""
    from test_rule_examples import _contract

    rule = RULES["cooperative-groups"]
    example = next(e for e in rule.invalid if e.name.startswith("binary_partition"))
    found = lint(rule.id, example.code, example.rocm_version)
    _contract(example, found)  # holds as written
    demoted = [
        d.__class__(**{**d.__dict__, "severity": d.severity.__class__("info")}) for d in found
    ]
    stated = example.__class__(**{**example.__dict__, "severity": "error"})
    with pytest.raises(AssertionError):
        _contract(stated, demoted)
    reworded = example.__class__(**{**example.__dict__, "message": ("before ROCm 9.9",)})
    with pytest.raises(AssertionError):
        _contract(reworded, found)
