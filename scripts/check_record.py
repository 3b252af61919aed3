#!/usr/bin/env python3
"""The repository of record (docs/design.md#evidence-of-record), checked:

1. every file under results/ is cited, by its path or by a folder of it at least as deep as
   results/<gpu>/<topic>/, in README.md, docs/*.md, analysis/ or scripts/;
2. every such file has, in its folder or a folder above it under results/<gpu>/, a README.md
   with a `Command:` line (what made the files) and a `Commit:` line (what they measured);
3. no tracked path or text speaks of how the project was developed rather than of anvil
   (the words below), and the code cites docs/design.md rather than an outside design file;
4. a JSON file whose provenance names the commit of the program that wrote it
   (`provenance.git_commit`) has that commit first on its README's `Commit:` line;
5. every validation record (results/<gpu>/{validation,transfer}/<set>/validation.json) is
   labelled held-out or seen in its README (analysis/record_labels.py).

    scripts/check_record.py [REPO]     exit 1 listing each fault (CTest check_record)
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "analysis"))
import record_labels  # noqa: E402

CITING = ("README.md", "docs", "analysis", "scripts")
TEXT_EXT = {".c", ".h", ".cu", ".cuh", ".py", ".md", ".json", ".txt", ".cmake", ".sh", ".in",
            ".csv", ".jsonl", ".toml", ".cfg", ".map", ".yml", ".yaml", ""}
# Development-history words: the project names things by what they are.
HISTORY = re.compile(r"(?<!scope=\")\bsessions?\b|\bcall ?\d+\b|\bround ?\d+\b|\bissue ?\d+\b",
                     re.I)  # pytest's fixture scope "session" is not history
OUTSIDE_DESIGN = re.compile(r"\bDESIGN\.md\b")
HISTORY_PATH = re.compile(r"^(s\d+(_\w+)?|session\w*|call\d*(_\w+)?|\w*_s\d+)$", re.I)
SELF = "scripts/check_record.py"


def tracked(repo):
    """Tracked files (git ls-files), or every file when the tree is not a git checkout."""
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        return [p for p in out.split("\0") if p and os.path.isfile(os.path.join(repo, p))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(repo):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build", "out"))]
            files += [os.path.relpath(os.path.join(root, n), repo) for n in names]
        return files


def read(repo, rel):
    try:
        with open(os.path.join(repo, rel), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None


def citing_text(repo, files):
    parts = []
    for rel in files:
        if rel.startswith("results/"):
            continue
        if rel == CITING[0] or rel.split("/")[0] in CITING[1:]:
            text = read(repo, rel)
            if text is not None:
                parts.append(text)
    return "\n".join(parts)


def cited(rel, corpus):
    """The file's path, or a folder of it at results/<gpu>/<topic>/ or deeper, appears."""
    parts = rel.split("/")
    for depth in range(len(parts), 2, -1):
        path = "/".join(parts[:depth])
        if re.search(re.escape(path) + r"(?![\w.-])", corpus):
            return True
    return False


COMMIT_LINE = re.compile(r"^\W*Commit:\W*([0-9a-f]{7,40})\b", re.M)


def provenance(repo, rel, cache):
    """The README.md above a results file that names its command and commit, or None."""
    parts = rel.split("/")
    for depth in range(len(parts) - 1, 2, -1):
        readme = "/".join(parts[:depth] + ["README.md"])
        if readme not in cache:
            text = read(repo, readme) or ""
            m = COMMIT_LINE.search(text)
            cache[readme] = (m.group(1) if re.search(r"^\W*Command:", text, re.M) and m
                             else None)
        if cache[readme]:
            return readme
    return None


def recorded_commit(repo, rel):
    """The commit a results JSON file says the program that wrote it was built from, without
    '-dirty', or None."""
    if not rel.endswith(".json"):
        return None
    try:
        with open(os.path.join(repo, rel), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    commit = prov.get("git_commit") if isinstance(prov, dict) else None
    return commit.split("-")[0] if isinstance(commit, str) and commit else None


def check_commits(repo, files, faults):
    """The README's Commit: line names first the commit the record's JSON says it measured."""
    cache = {}
    for rel in files:
        if not rel.startswith("results/"):
            continue
        commit = recorded_commit(repo, rel)
        readme = provenance(repo, rel, cache) if commit else None
        if readme and not commit.startswith(cache[readme]):
            faults.append(f"{rel}: recorded commit {commit[:7]}, but {readme} says "
                          f"'Commit: {cache[readme]}'; name first the commit the program "
                          "wrote (then, e.g., the commit it was re-predicted at)")


LABELLED = re.compile(r"^results/[^/]+/(validation|transfer)/[^/]+/validation\.json$")


def check_labels(repo, files, faults):
    """Every validation record says, in its README, whether it is held out or seen."""
    for rel in files:
        if not LABELLED.match(rel):
            continue
        record = rel[len("results/"):-len("/validation.json")]
        readme = record_labels.readme(repo, record)
        if readme is None:
            faults.append(f"{rel}: no README.md above it says 'held_out: true|false'")
            continue
        try:
            record_labels.parse(read(repo, readme) or "")
        except ValueError as e:
            faults.append(f"{readme}: {e}")


def check_results(repo, files, faults):
    corpus = citing_text(repo, files)
    cache = {}
    for rel in files:
        if not rel.startswith("results/"):
            continue
        if rel.count("/") < 3 and not rel.endswith("README.md"):
            faults.append(f"{rel}: results files live in results/<gpu>/<topic>/")
            continue
        if os.path.basename(rel) == "README.md":
            continue
        if not cited(rel, corpus):
            faults.append(f"{rel}: cited by no doc, analysis or script; remove it or cite it")
        if provenance(repo, rel, cache) is None:
            faults.append(f"{rel}: no README.md above it under results/<gpu>/ names the "
                          "'Command:' that made it and the 'Commit:' it measured")


def check_words(repo, files, faults):
    for rel in files:
        for part in rel.split("/")[:-1] + [os.path.splitext(os.path.basename(rel))[0]]:
            if HISTORY_PATH.match(part):
                faults.append(f"{rel}: path named after how it was made ('{part}')")
                break
        if rel == SELF or os.path.splitext(rel)[1] not in TEXT_EXT:
            continue
        text = read(repo, rel)
        if text is None:
            continue
        for no, line in enumerate(text.splitlines(), 1):
            m = HISTORY.search(line) or OUTSIDE_DESIGN.search(line)
            if m:
                faults.append(f"{rel}:{no}: '{m.group(0)}' speaks of the project's history or "
                              "an outside file; say what it is (docs/design.md)")


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = sorted(tracked(repo))
    faults = []
    check_results(repo, files, faults)
    check_commits(repo, files, faults)
    check_labels(repo, files, faults)
    check_words(repo, files, faults)
    for f in faults:
        print(f"check_record: {f}", file=sys.stderr)
    n = sum(1 for f in files if f.startswith("results/"))
    if faults:
        print(f"check_record: {len(faults)} fault(s)", file=sys.stderr)
        return 1
    print(f"check_record: {n} results files cited, with their command and commit, the "
          "commits their JSON records, and every validation record's held-out label; "
          f"{len(files)} tracked files free of history words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
