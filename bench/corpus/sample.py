"""Draw a seeded random sample of reported error/warning findings from one half, to review.

    python bench/corpus/sample.py JSON_DIR CORPUS_DIR [--half measured] [-n 60] [--seed 25]

JSON_DIR holds the reports `measure.py --json-dir` kept. The draw is uniform over the half's
reported error/warning findings (seed fixed, order by project, path, line, rule first), so
the same reports give the same sample; each is printed with three lines of its source for the
hand review in bench/reviews/.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from measure import folder, projects


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json_dir", type=Path)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--half", default="measured", choices=("tune", "measured"))
    ap.add_argument("-n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=25)
    args = ap.parse_args(argv)
    pool = []
    for proj in projects():
        report = args.json_dir / f"{folder(proj['name'])}.json"
        if proj["half"] != args.half or not report.is_file():
            continue
        for d in json.loads(report.read_text()):
            if "guarded" not in d and d["severity"] in ("error", "warning"):
                pool.append((proj["name"], d))
    pool.sort(key=lambda x: (x[0], x[1]["path"], x[1]["line"], x[1]["rule"]))
    drawn = random.Random(args.seed).sample(pool, min(args.n, len(pool)))
    for n, (name, d) in enumerate(drawn, 1):
        path = Path(d["path"])
        rel = path.as_posix().split(folder(name) + "/", 1)[-1]
        print(f"## {n}. {name} {rel}:{d['line']} {d['rule']} ({d['severity']})")
        print(d["message"])
        try:
            lines = (args.corpus / folder(name) / rel).read_text(errors="replace").splitlines()
            for i in range(max(0, d["line"] - 2), min(len(lines), d["line"] + 1)):
                print(f"    {i + 1:5} {lines[i][:160]}")
        except OSError:
            pass
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
