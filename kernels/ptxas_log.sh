#!/bin/sh
# Compiler launcher for the CUDA objects: runs the compile command given as arguments and
# keeps ptxas's resource report (-Xptxas -v) in <object>.ptxas.txt for gen_variants.py,
# passing every other diagnostic through to stderr.
obj=""
prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && obj="$a"
  prev="$a"
done
[ -n "$obj" ] || exec "$@"
log="$obj.ptxas.txt"
"$@" 2>"$log.tmp"
rc=$?
grep -v -e '^ptxas info' -e '^    [0-9]* bytes stack frame' "$log.tmp" >&2
mv "$log.tmp" "$log"
exit $rc
