#!/usr/bin/env python3
"""Fails when a link or a citation of a document does not resolve (docs/design.md#layers).

Checked in every tracked text file:
- in Markdown files, every relative link `[text](target)` (and `[label]: target`): the
  target file or folder exists, relative to the linking file; `(#anchor)` names a heading of
  the linking file itself;
- anywhere, in comments, strings and prose alike, every citation `<path>.md#<anchor>`: the path
  exists, relative to the citing file's folder or else to the repository root, and the anchor
  is a heading of it; and every bare `docs/<name>.md`, or `<NAME>.md` in capitals
  (README.md), exists.
An anchor names a heading by GitHub's rule: the heading's text as shown (code spans, links
and emphasis reduced to their text), lowercased, punctuation dropped, each space a '-', and
a repeated heading numbered `-1`, `-2`, ... An explicit `<a name="x">` or `id="x"` counts.
Usage:
  check_links.py [REPO_ROOT]     (default: the repository holding this script)
"""
import os
import re
import subprocess
import sys

MD_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MD_REF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)
CITATION = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)#([\w-]+)")
DOC_PATH = re.compile(r"(?<![\w./-])((?:docs/[\w.-]+|[A-Z][A-Z_]*)\.md)(?![\w#/-])")
SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HTML_ANCHOR = re.compile(r"<a\s[^>]*?(?:name|id)\s*=\s*\"([^\"]+)\"", re.I)


def tracked_files(root):
    """git's tracked files, else (an unpacked archive or a copy) every file outside build*/
    and hidden folders."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             text=True, check=True).stdout.split("\0")
        return [p for p in out if p]
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            out += [os.path.relpath(os.path.join(d, f), root) for f in files]
        return sorted(out)


def slug(heading):
    """GitHub's anchor of a heading's Markdown text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)                          # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(text):
    """Every anchor a Markdown text defines: its headings' (outside fenced code) and explicit
    HTML ones."""
    out, seen, fence = set(HTML_ANCHOR.findall(text)), {}, None
    for line in text.split("\n"):
        f = FENCE.match(line)
        if f:
            mark = f.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        h = None if fence else HEADING.match(line)
        if h:
            s = slug(h.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


class Repo:
    def __init__(self, root):
        self.root = root
        self._anchors = {}

    def exists(self, rel):
        return os.path.exists(os.path.join(self.root, rel))

    def anchors_of(self, rel):
        if rel not in self._anchors:
            with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
                self._anchors[rel] = anchors(f.read())
        return self._anchors[rel]

    def resolve(self, src, path, from_root=True):
        """The repository path `path` names when cited in `src`: relative to src's folder,
        else (when from_root) to the root; None when neither exists."""
        here = os.path.normpath(os.path.join(os.path.dirname(src), path))
        if path.startswith("/"):
            here = os.path.normpath(path.lstrip("/"))
        if not here.startswith("..") and self.exists(here):
            return here
        if from_root and not path.startswith("/") and self.exists(os.path.normpath(path)):
            return os.path.normpath(path)
        return None

    def check(self, src, path, anchor, from_root):
        """A sentence on what is wrong with the citation, or None."""
        rel = self.resolve(src, path, from_root) if path else src
        if rel is None:
            return f"{path}: no such file"
        if anchor is None or not rel.endswith(".md") or os.path.isdir(os.path.join(self.root, rel)):
            return None
        if anchor.lower() not in self.anchors_of(rel):
            return f"{path}#{anchor}: {rel} has no heading with the anchor '{anchor}'"
        return None


def citations(path, text):
    """(line, cited path, anchor or None, from_root) for every link and citation in text."""
    out, targets = [], set()

    def line_of(i):
        return text.count("\n", 0, i) + 1

    if path.endswith(".md"):
        for m in list(MD_LINK.finditer(text)) + list(MD_REF.finditer(text)):
            target = m.group(1)
            targets.add(m.start(1))
            if SCHEME.match(target):
                continue
            file, _, anchor = target.partition("#")
            out.append((line_of(m.start()), file, anchor or None, False))
    for pattern, anchored in ((CITATION, True), (DOC_PATH, False)):
        for m in pattern.finditer(text):
            if m.start() not in targets:  # a link's target: checked above, as a link
                out.append((line_of(m.start()), m.group(1), m.group(2) if anchored else None,
                            True))
    return out


def problems(root):
    repo, found = Repo(root), []
    for path in tracked_files(root):
        full = os.path.join(root, path)
        if not os.path.isfile(full) or os.path.islink(full):
            continue
        try:
            with open(full, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue  # binary
        for line, cited, anchor, from_root in citations(path, text):
            why = repo.check(path, cited, anchor, from_root)
            if why:
                found.append(f"{path}:{line}: {why}")
    return found


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = problems(root)
    for p in found:
        print(p)
    if found:
        print(f"check_links: {len(found)} links or citations do not resolve")
        return 1
    print("check_links: every link and document citation resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
