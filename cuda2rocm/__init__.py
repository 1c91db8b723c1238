"""cuda2rocm: find and fix what breaks when a PyTorch project moves to ROCm."""

# The version comes from git tags: hatch-vcs writes cuda2rocm/_version.py when a wheel, an sdist
# or an editable install is built (see pyproject.toml). A source tree nobody built (PYTHONPATH
# on a checkout) has no such file and reports the fallback, the same string pyproject.toml gives
# hatch-vcs for a tree without git metadata (tests/test_release.py keeps the two equal).
FALLBACK_VERSION = "0.1.0.dev0"

try:
    from cuda2rocm._version import __version__
except ImportError:  # pragma: no cover - depends on how the tree was installed
    __version__ = FALLBACK_VERSION
