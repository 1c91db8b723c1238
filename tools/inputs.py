"""The data generators' pinned inputs (tools/inputs.toml), fetched into a folder of the clone.

Generators read `show(repo, rev, path)` and `include(wheel)` instead of paths on one machine:
the revisions are the data, this module only brings them in. `python tools/inputs.py fetch`
clones each repository bare with blobs on demand and unpacks each wheel's include folder;
`python tools/inputs.py check` says what is missing. Nothing here is imported by the package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PINNED = tomllib.loads((Path(__file__).with_name("inputs.toml")).read_text(encoding="utf-8"))


def folder() -> Path:
    """Where inputs live: $CUDA2ROCM_INPUTS, else .inputs/ in the clone."""
    return Path(os.environ.get("CUDA2ROCM_INPUTS", ROOT / ".inputs"))


def git_dir(repo: str) -> Path:
    """The bare clone of `repo` (OWNER/NAME): a mirror under $CUDA2ROCM_MIRRORS when one is
    there, else the inputs folder's own clone (which `fetch` makes)."""
    if repo not in PINNED["git"]:
        raise KeyError(f"{repo} is not a pinned input (tools/inputs.toml)")
    mirrors = os.environ.get("CUDA2ROCM_MIRRORS")
    if mirrors:
        mirror = Path(mirrors) / repo.replace("/", "+") / "repo"
        if mirror.is_dir():
            return mirror
    return folder() / "git" / repo.replace("/", "+")


def show(repo: str, rev: str, path: str) -> str:
    """`path` at `rev` of the pinned repository; a revision not pinned is refused, so a
    generator cannot read an input nobody recorded. Empty when the clone lacks it."""
    if rev not in PINNED["git"][repo]["revs"]:
        raise KeyError(f"{repo}@{rev} is not pinned in tools/inputs.toml")
    done = subprocess.run(
        ["git", f"--git-dir={git_dir(repo)}", "show", f"{rev}:{path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else ""


def include(wheel: str) -> Path:
    """The unpacked include folder of the pinned `wheel`."""
    spec = PINNED["wheel"][wheel]
    return folder() / "wheel" / f"{wheel}-{spec['version']}" / spec["include"]


def _complete(repo: str) -> bool:
    """A mirror is taken as it is; a clone of ours counts once `fetch` has read every pinned
    file from it (an interrupted fetch leaves no clone that looks complete)."""
    where = git_dir(repo)
    return where.is_dir() and (where.parent != folder() / "git" or (where / "pinned").is_file())


def missing() -> list[str]:
    """The inputs not here yet, by name."""
    gone = [repo for repo in PINNED["git"] if not _complete(repo)]
    return gone + [wheel for wheel in PINNED["wheel"] if not include(wheel).is_dir()]


def fetch() -> int:
    """Bring in every input not here; the number that could not be fetched."""
    failed = 0
    for repo, spec in PINNED["git"].items():
        if _complete(repo):
            continue
        dest = git_dir(repo)
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        url = f"https://github.com/{repo}"
        done = subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none", url, dest])
        # Read every pinned file now (a partial clone fetches blobs on demand), so generators
        # and tests later need no network.
        if done.returncode == 0 and all(
            show(repo, rev, path) for rev in spec["revs"] for path in spec["paths"]
        ):
            (dest / "pinned").write_text("every pinned revision and path was read\n")
        else:
            failed += 1
    for wheel, spec in PINNED["wheel"].items():
        if include(wheel).is_dir():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp]
            done = subprocess.run([*pip, f"{wheel}=={spec['version']}"])
            wheels = list(Path(tmp).glob("*.whl"))
            if done.returncode or not wheels:
                failed += 1
                continue
            with zipfile.ZipFile(wheels[0]) as zf:
                members = [m for m in zf.namelist() if m.startswith(spec["include"] + "/")]
                zf.extractall(include(wheel).parents[spec["include"].count("/")], members)
    return failed


def main(argv: list[str]) -> int:
    if argv[1:] == ["fetch"]:
        failed = fetch()
        print(f"inputs in {folder()}; {failed} could not be fetched" if failed else folder())
        return 1 if failed else 0
    if argv[1:] == ["check"]:
        gone = missing()
        print("missing: " + ", ".join(gone) if gone else "all pinned inputs are here")
        return 1 if gone else 0
    print("usage: python tools/inputs.py fetch|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
