#!/usr/bin/env python3
"""CTest check_links_planted: scripts/check_links.py must catch a broken anchor.

Copies the tracked files to a temporary folder and checks that the copy passes; then, one at
a time, breaks the anchor of the first heading citation in a C header's comment, the anchor
of the first Markdown link in docs/, and the file of that link, and checks that each makes
the check fail naming that file and line and nothing else.

    tests/check_links_planted.py REPO_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
from check_links import tracked_files  # noqa: E402

CITATION = re.compile(r"docs/\w+\.md#[\w-]+")
MD_LINK = re.compile(r"\]\((\w+\.md)#([\w-]+)\)")


def run(root, script):
    p = subprocess.run([sys.executable, script, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def first(root, paths, pattern):
    """(path, text, match) of the first of paths whose text matches pattern."""
    for rel in sorted(paths):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        m = pattern.search(text)
        if m:
            return rel, text, m
    sys.exit(f"check_links_planted: no file to plant in matches {pattern.pattern}")


def plant(root, script, rel, text, start, end, new):
    """Replaces text[start:end] by new in root/rel, runs the check, restores the file; returns
    an error sentence, or None when the check failed naming only rel at that line."""
    path = os.path.join(root, rel)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:start] + new + text[end:])
    rc, out = run(root, script)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    where = f"{rel}:{text.count(chr(10), 0, start) + 1}:"
    named = [line.split(" ")[0] for line in out.splitlines() if not line.startswith("check_links")]
    if rc != 1 or named != [where]:
        return (f"after writing {new!r} in {rel}, expected exit 1 naming only {where}; got exit "
                f"{rc}:\n{out}")
    print(f"check_links_planted: {new!r} in {rel} is caught: {out.splitlines()[0]}")
    return None


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(HERE)
    files = tracked_files(src)
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "repo")
        for rel in files:
            if os.path.isfile(os.path.join(src, rel)):
                os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
                shutil.copy2(os.path.join(src, rel), os.path.join(root, rel))
        script = os.path.join(root, "scripts", "check_links.py")
        rc, out = run(root, script)
        if rc != 0:
            print(f"check_links_planted: the unchanged copy does not pass:\n{out}")
            return 1
        headers = [p for p in files if p.endswith(".h")]
        rel, text, m = first(root, headers, CITATION)
        bad = [plant(root, script, rel, text, m.start(), m.end(), m.group(0) + "-none")]
        docs = [p for p in files if p.startswith("docs/") and p.endswith(".md")]
        rel, text, m = first(root, docs, MD_LINK)
        bad.append(plant(root, script, rel, text, m.start(2), m.end(2), m.group(2) + "-none"))
        bad.append(plant(root, script, rel, text, m.start(1), m.end(1), "none-" + m.group(1)))
        for b in bad:
            if b:
                print(f"check_links_planted: {b}")
        return 1 if any(bad) else 0


if __name__ == "__main__":
    sys.exit(main())
