#!/bin/sh
# CTest doc_numbers: runs every paper reproduction (scripts/reproduce --list) into OUT and
# checks that each marked number of docs/*.md agrees with it and with the committed results
# (scripts/doc_numbers.py --check). Exit 77 (skipped) without matplotlib, which the studies'
# analysis scripts need.
#   tests/doc_numbers.sh ANVIL PYTHON OUT      (from the repository root)
anvil=$1 py=$2 out=$3
"$py" -c 'import matplotlib' 2>/dev/null || { echo "doc_numbers: no matplotlib; skipped"; exit 77; }
for s in $(bash scripts/reproduce --list); do
  if ! "$anvil" run "experiments/$s.json" --out "$out/$s" --quiet; then
    echo "doc_numbers: anvil run experiments/$s.json --out $out/$s failed" >&2
    exit 1
  fi
done
exec "$py" scripts/doc_numbers.py --check --repro "$out" --require-repro
