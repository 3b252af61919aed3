#!/usr/bin/env python3
"""CTest doc_numbers_planted: scripts/doc_numbers.py --check must catch a changed digit.

Copies docs/ to a temporary folder, reproduces one small study (flashforge_fig8) there, and
checks that the copy agrees with it; then changes one digit of a number inside the block
reproductions.flashforge_fig8_table and checks that --check now fails, naming that block and
no other. Exit 77 (skipped) without matplotlib, which the studies' analysis scripts need.

    tests/doc_numbers_planted.py ANVIL      (from the repository root)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

STUDY = "flashforge_fig8"
BLOCK = "reproductions.flashforge_fig8_table"


def check(docs, repro):
    # only one study is reproduced: the other reproductions' blocks are skipped, as expected
    p = subprocess.run([sys.executable, "scripts/doc_numbers.py", "--check", "--allow-skips",
                        "--docs", docs, "--repro", repro], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def plant(path):
    """Changes the last digit of the simulated latency in the first row of BLOCK's table (the
    column "anvil (sim)", a number the reproduction computes); returns (old, new) digit."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- n:" + re.escape(BLOCK) + r" -->(.*?)<!-- /n -->", text, re.S)
    if not m:
        sys.exit(f"doc_numbers_planted: {path} has no block {BLOCK}")
    lines = m.group(1).split("\n")
    header = [c.strip() for c in lines[1].split("|")]
    if "anvil (sim)" not in header or not lines[3].startswith("|"):
        sys.exit(f"doc_numbers_planted: block {BLOCK} is not a table with an 'anvil (sim)' column")
    col = header.index("anvil (sim)")
    cells = lines[3].split("|")
    d = list(re.finditer(r"\d", cells[col]))
    if not d:
        sys.exit(f"doc_numbers_planted: the first 'anvil (sim)' cell of {BLOCK} has no digit")
    i = m.start(1) + sum(len(x) + 1 for x in lines[:3]) + sum(len(c) + 1 for c in cells[:col])
    i += d[-1].start()
    new = str((int(text[i]) + 1) % 10)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:i] + new + text[i + 1:])
    return text[i], new


def main():
    anvil = sys.argv[1]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("doc_numbers_planted: no matplotlib; skipped")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        docs, repro = os.path.join(tmp, "docs"), os.path.join(tmp, "repro")
        shutil.copytree("docs", docs)
        subprocess.run([anvil, "run", f"experiments/{STUDY}.json", "--out",
                        os.path.join(repro, STUDY), "--quiet"], check=True)
        rc, out = check(docs, repro)
        if rc != 0:
            print(f"doc_numbers_planted: the unchanged docs do not pass:\n{out}")
            return 1
        old, new = plant(os.path.join(docs, "reproductions.md"))
        rc, out = check(docs, repro)
        named = re.findall(r"block (\S+) disagrees", out)
        if rc != 1 or named != [BLOCK]:
            print(f"doc_numbers_planted: after changing {old} to {new} in {BLOCK}, expected "
                  f"exit 1 naming only that block; got exit {rc}, blocks {named}:\n{out}")
            return 1
        print(f"doc_numbers_planted: changing {old} to {new} in {BLOCK} is caught:\n{out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
