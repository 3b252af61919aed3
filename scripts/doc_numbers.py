#!/usr/bin/env python3
"""Writes the numbers of docs/*.md from committed results, so a doc cannot disagree with its data.

A number (or a table) in a doc sits between two markers:

    <!-- n:MODULE.NAME -->text written by the generator<!-- /n -->

MODULE is a module of analysis/docnums/, NAME one of its functions; the function takes the
context (repository root, the directory of a fresh `./scripts/reproduce`) and returns the text.
Block generators return text that starts and ends with a newline; inline ones a bare string.

    scripts/doc_numbers.py            rewrite every marked block of docs/*.md and README.md
    scripts/doc_numbers.py --check    exit 1 listing each block that differs (CTest doc_numbers)
    --docs DIR                        the docs folder (default docs/)
    --repro DIR                       the output of ./scripts/reproduce (default out/); blocks of
                                      the `reproductions` module need it, others are skipped
                                      when it holds no study (--skip-repro skips them outright)
"""
import argparse
import difflib
import glob
import importlib
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "analysis"))
from docnums import SkipBlock  # noqa: E402

BLOCK = re.compile(r"(<!-- n:([A-Za-z_][\w]*)\.([A-Za-z_]\w*) -->)(.*?)(<!-- /n -->)", re.S)


class Context:
    """What a generator may read: the repository root and a fresh reproduction's output."""

    def __init__(self, repo, repro):
        self.repo = repo
        self.repro = repro

    def path(self, *parts):
        return os.path.join(self.repo, *parts)

    def repro_study(self, study):
        """out/<study>/ of a fresh ./scripts/reproduce; None when it was not run."""
        d = os.path.join(self.repro, study)
        return d if os.path.isfile(os.path.join(d, "results.json")) else None


def generate(ctx, module, name, cache):
    if module not in cache:
        cache[module] = importlib.import_module(f"docnums.{module}")
    fn = getattr(cache[module], name, None)
    if fn is None or name.startswith("_"):
        raise KeyError(f"analysis/docnums/{module}.py has no generator '{name}'")
    return fn(ctx)


def process(path, ctx, skip_modules, cache):
    """Returns (new text, [(block, expected, found)]) for one doc."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    diffs = []

    def repl(m):
        module, name, found = m.group(2), m.group(3), m.group(4)
        if module in skip_modules:
            return m.group(0)
        try:
            want = generate(ctx, module, name, cache)
        except SkipBlock:
            return m.group(0)
        if want != found:
            diffs.append((f"{module}.{name}", want, found))
        return m.group(1) + want + m.group(5)

    return BLOCK.sub(repl, text), diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--docs", default=os.path.join(REPO, "docs"))
    ap.add_argument("--repro", default=os.path.join(REPO, "out"))
    ap.add_argument("--skip-repro", action="store_true")
    ap.add_argument("--require-repro", action="store_true",
                    help="fail, instead of skipping, when a reproduction's output is missing")
    args = ap.parse_args()
    ctx = Context(REPO, os.path.abspath(args.repro))
    ctx.require_repro = args.require_repro
    skip = {"reproductions"} if args.skip_repro else set()
    cache, bad, blocks = {}, 0, 0
    docs = sorted(glob.glob(os.path.join(args.docs, "*.md")))
    if os.path.abspath(args.docs) == os.path.join(REPO, "docs"):  # and the README's tables
        docs.append(os.path.join(REPO, "README.md"))
    if not docs:
        print(f"doc_numbers: no *.md under {args.docs}", file=sys.stderr)
        return 1
    for doc in docs:
        try:
            new, diffs = process(doc, ctx, skip, cache)
        except (KeyError, OSError, ValueError) as e:
            print(f"doc_numbers: {os.path.relpath(doc, REPO)}: {e}", file=sys.stderr)
            return 1
        blocks += len(BLOCK.findall(new))
        rel = os.path.relpath(doc, REPO)
        if args.check:
            for name, want, found in diffs:
                bad += 1
                print(f"doc_numbers: {rel}: block {name} disagrees with the committed results:",
                      file=sys.stderr)
                for line in difflib.unified_diff(found.splitlines(), want.splitlines(),
                                                 "in the doc", "from the results", lineterm="",
                                                 n=0):
                    print("    " + line, file=sys.stderr)
        elif diffs:
            with open(doc, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"doc_numbers: {rel}: {len(diffs)} block(s) rewritten")
    if args.check:
        if bad:
            print(f"doc_numbers: {bad} block(s) out of date; run scripts/doc_numbers.py",
                  file=sys.stderr)
            return 1
        print(f"doc_numbers: {blocks} block(s) in {len(docs)} docs agree with the results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
