#!/usr/bin/env python3
"""Fails when a tracked C or CUDA source file is longer than 600 lines, one of its
top-level functions has a body longer than 80 lines, or a function definition or prototype
takes more than 8 parameters (docs/style.md#sizes: split along a real seam; group parameters
that travel together into a struct that says what they are).

A function is a top-level brace block whose opening line ends a declarator: `...) {`. The
body is counted from the line after its opening brace to the line before its closing one.
Braces inside strings, character constants and comments are skipped. A prototype or
definition is a top-level declaration (outside any brace block but an `extern "C"` one, and
outside preprocessor lines) of the form `TYPE NAME(PARAMETERS)` ending in `;` or `{`; its
parameters are the commas at the list's own depth plus one (`(void)` and `()` are none).
Usage:
  check_sizes.py [REPO_ROOT]     (default: the repository holding this script)
"""
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 8
SOURCE_EXTS = (".c", ".h", ".cu", ".cuh")


def strip_code(text):
    """text with comments, strings and character constants blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first body line, body lines) of each top-level function."""
    code = strip_code(text)
    lines = code.split("\n")
    depth, found, start = 0, [], None
    for no, line in enumerate(lines, 1):
        for col, c in enumerate(line):
            if c == "{":
                if depth == 0:
                    head = (code_before(lines, no, col)).rstrip()
                    start = (no, head) if head.endswith(")") else None
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0 and start:
                    m = re.search(r"(\w+)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$", start[1])
                    name = m.group(1) if m else "?"
                    found.append((name, start[0], no - start[0] - 1))
                    start = None
    return found


DECLARATOR = re.compile(r"\w[\w\s\*]*?\b(\w+)\s*\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)"
                        r"\s*(?:__attribute__\s*\(\(.*\)\)\s*)?$", re.S)


def blank_preprocessor(code):
    """code with its preprocessor lines (and their continuations) blanked."""
    lines, cont = code.split("\n"), False
    for i, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            lines[i] = ""
    return "\n".join(lines)


def parameter_count(params):
    """The parameters in a declarator's list: commas at its own depth plus one."""
    text = params.strip()
    if text in ("", "void"):
        return 0
    depth, n = 0, 1
    for c in text:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            n += 1
    return n


def wide_functions(text):
    """(name, line, parameters) of each top-level prototype or definition with more than
    MAX_PARAMETERS parameters."""
    code = blank_preprocessor(strip_code(text))
    code = re.sub(r'extern\s*"\s*"\s*\{', lambda m: " " * len(m.group(0)), code)
    found, depth, start = [], 0, 0
    for i, c in enumerate(code):
        if c in "{;" and depth == 0:
            m = DECLARATOR.search(code[start:i].strip())
            if m and parameter_count(m.group(2)) > MAX_PARAMETERS:
                at = start + code[start:i].index(m.group(0)) + m.start(1) - m.start(0)
                found.append((m.group(1), code.count("\n", 0, at) + 1,
                              parameter_count(m.group(2))))
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
        if c in "{};" and depth == 0:
            start = i + 1
    return found


def code_before(lines, no, col):
    """The text of the declaration before the brace at (no, col): this and earlier lines."""
    prev = "\n".join(lines[max(0, no - 8):no - 1])
    return prev + "\n" + lines[no - 1][:col]


def tracked_sources(root):
    """The repository's C/CUDA sources: git's tracked files, else (an unpacked archive) every
    such file outside build*/ and hidden folders."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            out += [os.path.relpath(os.path.join(d, f), root) for f in files]
    return [p for p in out if p.endswith(SOURCE_EXTS)]


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = []
    for path in tracked_sources(root):
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        with open(full, encoding="utf-8", errors="replace") as f:
            text = f.read()
        n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if n > MAX_FILE_LINES:
            problems.append(f"{path}: {n} lines; at most {MAX_FILE_LINES} allowed")
        for name, line, body in functions(text):
            if body > MAX_FUNCTION_LINES:
                problems.append(f"{path}:{line}: function {name} is {body} lines long; "
                                f"at most {MAX_FUNCTION_LINES} allowed")
        for name, line, params in wide_functions(text):
            problems.append(f"{path}:{line}: function {name} takes {params} parameters; "
                            f"at most {MAX_PARAMETERS} allowed")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} size limit(s) exceeded")
        return 1
    print("sizes: every file, function and parameter list within limits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
