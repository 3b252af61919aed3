#!/bin/sh
# The peer tools without a GPU (docs/kernels.md#peers): analysis/peer_table.py reads the two
# committed peer records and gives their geometric means, and refuses a folder without an
# anvil report; the scripts that scripts/peer-evidence, scripts/kernel-evidence and the records'
# commands run exist; scripts/peer-evidence refuses bad arguments with a message, before it
# builds or runs anything.  usage: tests/peer_tools.sh PYTHON   (from the repository root)
py="${1:-python3}"
fail() { echo "peer_tools: $*" >&2; exit 1; }
out=$("$py" analysis/peer_table.py results/h200/peers) || fail "peer_table on results/h200/peers"
echo "$out" | grep -q "^geometric mean, peer / anvil: SDPA split 16.65× (21 batches), varlen 8.28× (21 batches), cascade 2.13× (21 batches)$" ||
  fail "results/h200/peers: unexpected means: $(echo "$out" | tail -n 1)"
out=$("$py" analysis/peer_table.py results/h100/peers_graph) || fail "peer_table on results/h100/peers_graph"
echo "$out" | grep -q "^| chain-238906 | 64/8 | 77.1 (\`auto\`) | 3.86× |$" ||
  fail "results/h100/peers_graph: chain-238906's row is missing or wrong"
echo "$out" | grep -q "cascade as a graph 1.63× (21 batches)$" || fail "results/h100/peers_graph: mean"
err=$("$py" analysis/peer_table.py results/h100 2>&1) && fail "peer_table accepted a folder without anvil.json"
echo "$err" | grep -q "no anvil.json or anvil_graph.json" || fail "peer_table's message: $err"
# Every Python script the evidence scripts and the records' commands run is where they say.
for s in $(find results -name README.md | xargs grep -hoE 'python3 [A-Za-z0-9_./-]+\.py' \
             scripts/peer-evidence scripts/kernel-evidence | cut -d' ' -f2 | sort -u); do
  [ -f "$s" ] || fail "$s, which a command of scripts/ or results/ runs, does not exist"
done
check() {  # check EXPECTED_MESSAGE ARGS...: peer-evidence exits 1 with the message
  want="$1"
  shift
  err=$(bash scripts/peer-evidence "$@" 2>&1) && fail "peer-evidence $* succeeded"
  echo "$err" | grep -q "$want" || fail "peer-evidence $*: '$err' lacks '$want'"
}
check "missing the experiment file"
check "nope.json: no such file" nope.json
check "unknown step 'foo'" experiments/quickstart.json --steps anvil,foo
check "one experiment file" a.json b.json
check "unknown option '--bogus'" --bogus
echo "peer_tools: ok"
