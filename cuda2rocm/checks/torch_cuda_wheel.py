"""torch-cuda-wheel: CUDA builds of torch pinned by local version (`+cu121`) or index URL.

Reads requirement files, `pyproject.toml` dependency lists and `pip install` lines in shell
scripts and Dockerfiles. No rewrite: the ROCm install belongs in its own requirements file or
build stage, next to the CUDA one, not in place of it.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends.text import TextRule


class Rule(TextRule):
    def check(self) -> None:
        tables = self.spec.tables
        packages = set(tables.get("packages", []))
        local = re.compile(tables["local_version"])
        index = re.compile(tables["index_url"])
        for req in self.view.requirements():
            m = local.search(req.spec)
            if req.key in packages and m:
                self.report(
                    req.start,
                    req.end,
                    f"{req.name}{req.spec} is a CUDA build ({m.group(0)}): on an AMD GPU "
                    "torch.cuda.is_available() is False; install the +rocm build from "
                    "https://download.pytorch.org/whl/rocmX.Y in a separate ROCm requirements "
                    "file or image",
                )
        for opt in self.view.index_options():
            m = index.search(opt.url)
            if m:
                self.report(
                    opt.start,
                    opt.end,
                    f"{opt.option} {opt.url} serves CUDA builds of torch ({m.group(1)}); the ROCm "
                    "builds are on https://download.pytorch.org/whl/rocmX.Y — use that URL with "
                    "--index-url (not --extra-index-url, which lets pip pick a PyPI build) in a "
                    "separate ROCm requirements file or image",
                )
