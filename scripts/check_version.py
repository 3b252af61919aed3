#!/usr/bin/env python3
"""Fails when the project's version is written anywhere but CMakeLists.txt.

The version has one source, `project(anvil VERSION X.Y.Z)` in CMakeLists.txt: the build
writes it into av_version() (cmake/version.cmake), which `anvil --version`, results'
provenance and the C API's anvil_version() return, and the Python package reads it from the
same line (python/pyproject.toml: a dynamic version, scikit-build-core's regex provider).
This check fails when python/pyproject.toml gives a version of its own, or reads it from
another file or with a pattern that does not yield CMake's, or when a tracked source or build
file (C, CUDA, Python, TOML, CMake, shell) holds the version as a quoted literal.
Exit 77 (skipped) on a Python without tomllib (before 3.11). Usage:
  check_version.py [REPO_ROOT]     (default: the repository holding this script)
"""
import os
import re
import sys

try:
    import tomllib
except ImportError:  # Python before 3.11: CTest reports the check as skipped
    tomllib = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_links import tracked_files  # noqa: E402

PROJECT = re.compile(r"^\s*project\(\s*anvil\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", re.M)
SOURCE_EXTS = (".c", ".h", ".cu", ".cuh", ".py", ".toml", ".cmake", ".sh", "CMakeLists.txt")
REGEX_PROVIDER = "scikit_build_core.metadata.regex"


def cmake_version(root):
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        m = PROJECT.search(f.read())
    return m.group(1) if m else None


def package_faults(root, version):
    """What is wrong with how python/pyproject.toml gets its version."""
    path = os.path.join(root, "python", "pyproject.toml")
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    project = doc.get("project", {})
    if "version" in project:
        return [f"python/pyproject.toml: project.version is {project['version']!r}; the version "
                f"is read from CMakeLists.txt (dynamic = [\"version\"])"]
    if "version" not in project.get("dynamic", []):
        return ["python/pyproject.toml: project.dynamic does not name \"version\""]
    spec = doc.get("tool", {}).get("scikit-build", {}).get("metadata", {}).get("version", {})
    if spec.get("provider") != REGEX_PROVIDER:
        return [f"python/pyproject.toml: tool.scikit-build.metadata.version.provider is "
                f"{spec.get('provider')!r}, expected {REGEX_PROVIDER!r}"]
    source = os.path.normpath(os.path.join(root, "python", spec.get("input", "")))
    if source != os.path.normpath(os.path.join(root, "CMakeLists.txt")):
        return [f"python/pyproject.toml: tool.scikit-build.metadata.version.input is "
                f"{spec.get('input')!r}, expected \"../CMakeLists.txt\""]
    with open(source, encoding="utf-8") as f:
        m = re.search(spec.get("regex", ""), f.read(), re.M)
    got = m.groupdict().get("value") if m else None
    if got != version:
        return [f"python/pyproject.toml: tool.scikit-build.metadata.version.regex reads "
                f"{got!r} from CMakeLists.txt, expected {version!r}"]
    return []


def literal_faults(root, version):
    """Tracked sources that hold the version as a quoted literal."""
    quoted = re.compile("[\"']" + re.escape(version) + "[\"']")
    out = []
    for rel in tracked_files(root):
        if not rel.endswith(SOURCE_EXTS) or not os.path.isfile(os.path.join(root, rel)):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                if quoted.search(line):
                    out.append(f"{rel}:{n}: the version {version} written out; it comes from "
                               f"CMakeLists.txt (av_version(), or PROJECT_VERSION in CMake)")
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if tomllib is None:
        print("check_version: no tomllib (Python 3.11 or later); skipped")
        return 77
    version = cmake_version(root)
    if version is None:
        print("check_version: CMakeLists.txt has no project(anvil VERSION ...)")
        return 1
    faults = package_faults(root, version) + literal_faults(root, version)
    for f in faults:
        print(f)
    if faults:
        return 1
    print(f"check_version: {version} is written in CMakeLists.txt only")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
