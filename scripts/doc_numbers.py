#!/usr/bin/env python3
"""Writes the numbers of docs/*.md and of the README beside docs/ from committed results, so a
doc cannot disagree with its data.

A number (or a table) in a doc sits between two markers:

    <!-- n:MODULE.NAME -->text written by the generator<!-- /n -->

MODULE is a module of analysis/docnums/, NAME one of its functions; the function takes the
context (repository root, the directory of a fresh `./scripts/reproduce`) and returns the text.
Block generators return text that starts and ends with a newline; inline ones a bare string.

    scripts/doc_numbers.py            rewrite every marked block of docs/*.md and README.md
    scripts/doc_numbers.py --check    exit 1 listing each block that differs (CTest doc_numbers),
                                      and each block it could not check (skipped)
    --docs DIR                        the docs folder (default docs/)
    --repro DIR                       the output of ./scripts/reproduce (default out/); blocks of
                                      the `reproductions` module need it, others are skipped
                                      when it holds no study (--skip-repro skips them outright)
    --allow-skips                     with --check: skipped blocks are expected (listed, exit 0);
                                      --skip-repro implies it for the blocks it skips
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


def process(path, ctx, skip_modules, cache, skipped):
    """Returns (new text, [(block, expected, found)]) for one doc; appends the blocks it could
    not generate (their input is absent) to `skipped`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    diffs = []

    def repl(m):
        module, name, found = m.group(2), m.group(3), m.group(4)
        if module in skip_modules:
            skipped.append(f"{module}.{name}")
            return m.group(0)
        try:
            want = generate(ctx, module, name, cache)
        except SkipBlock as e:
            skipped.append(f"{module}.{name} (no fresh reproduction of '{e}' under {ctx.repro})")
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
    ap.add_argument("--allow-skips", action="store_true",
                    help="with --check, blocks whose input is absent are expected: exit 0")
    args = ap.parse_args()
    ctx = Context(REPO, os.path.abspath(args.repro))
    ctx.require_repro = args.require_repro
    skip = {"reproductions"} if args.skip_repro else set()
    cache, bad, blocks, skipped = {}, 0, 0, []
    docs = sorted(glob.glob(os.path.join(args.docs, "*.md")))
    readme = os.path.join(os.path.dirname(os.path.abspath(args.docs)), "README.md")
    if docs and os.path.isfile(readme):
        docs.append(readme)
    if not docs:
        print(f"doc_numbers: no *.md under {args.docs}", file=sys.stderr)
        return 1
    for doc in docs:
        try:
            n_skipped = len(skipped)
            new, diffs = process(doc, ctx, skip, cache, skipped)
        except (KeyError, OSError, ValueError) as e:
            print(f"doc_numbers: {os.path.relpath(doc, REPO)}: {e}", file=sys.stderr)
            return 1
        rel = os.path.relpath(doc, REPO)
        skipped[n_skipped:] = [f"{rel}: {s}" for s in skipped[n_skipped:]]
        blocks += len(BLOCK.findall(new))
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
    checked = blocks - len(skipped)
    if args.check:
        if bad:
            print(f"doc_numbers: {bad} block(s) out of date; run scripts/doc_numbers.py",
                  file=sys.stderr)
            return 1
        if skipped and not (args.allow_skips or args.skip_repro):
            print(f"doc_numbers: {len(skipped)} of {blocks} block(s) not checked:", file=sys.stderr)
            for s in skipped:
                print("    " + s, file=sys.stderr)
            print("doc_numbers: run ./scripts/reproduce (or pass --repro DIR) to check them, or "
                  "--allow-skips if skipping them is expected", file=sys.stderr)
            return 1
        print(f"doc_numbers: {checked} block(s) in {len(docs)} docs agree with the results"
              + (f"; {len(skipped)} skipped (expected)" if skipped else ""))
    elif skipped:
        print(f"doc_numbers: {len(skipped)} block(s) left as they were (their input is absent)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
