"""vLLM-style decode batches as numpy block tables: a shared prefix tree of block ids, each
request's own blocks, and decode steps that add one token per request (a new block id when
the last block is full). Used by the examples, the benchmark and the tests."""
from __future__ import annotations

import json

import numpy as np

from ._values import int_array, integer

MAX_TOKENS = 1 << 22   # per request: anvil's default limits.request_tokens


def _layout_check(requests, levels, fanout, own, bs):
    """(requests, levels, fanout, own tokens per request, block size) read by the package's
    one rule (anvil._values); ValueError for a batch that cannot be laid out."""
    requests = integer(requests, "requests", 1)
    bs = integer(bs, "block_size", 1)
    try:
        levels, fanout = list(levels), list(fanout)
    except TypeError:
        raise TypeError(f"levels {levels!r}, fanout {fanout!r}: expected sequences of "
                        "integers") from None
    if len(levels) != len(fanout):
        raise ValueError(f"{len(levels)} prefix levels but {len(fanout)} fanouts")
    for i, (L, g) in enumerate(zip(levels, fanout)):
        levels[i] = integer(L, f"levels[{i}]", 0, MAX_TOKENS)
        if levels[i] % bs:
            raise ValueError(f"levels[{i}]: {L!r} tokens; expected whole blocks of {bs}")
        fanout[i] = integer(g, f"fanout[{i}]", 1, requests)
    if np.ndim(own) == 0:
        own = np.full(requests, integer(own, "own", 0, MAX_TOKENS), dtype=np.int64)
    else:
        own = int_array(own, np.int64, "own", lo=0, hi=MAX_TOKENS)
        if len(own) != requests:
            raise ValueError(f"own: {len(own)} entries for {requests} requests")
    total = sum(levels) + own
    if (total < 1).any() or (total > MAX_TOKENS).any():
        raise ValueError(f"own: expected each request in [1, {MAX_TOKENS}] tokens")
    return requests, levels, fanout, own, bs


class DecodeBatch:
    """Requests whose KV is `shared` groups of prefix blocks plus their own blocks.

    levels: tokens per level above the requests, e.g. (2048, 512) with fan-out (1, 16): one
    root prompt of 2048 tokens, 16 second-level prefixes of 512, requests spread over them.
    own: tokens of each request's own suffix (an int or one per request)."""

    def __init__(self, requests: int, levels=(2048, 512), fanout=(1, 16), own=120,
                 block_size: int = 16, capacity_blocks: int = 0):
        requests, levels, fanout, own, bs = _layout_check(requests, levels, fanout, own,
                                                          block_size)
        self.block_size = bs
        prefix_blocks = [L // bs for L in levels]
        extra = integer(capacity_blocks, "capacity_blocks", 0) or 64
        width = sum(prefix_blocks) + int(-(-own.max() // bs)) + extra
        self.table = np.full((requests, width), -1, dtype=np.int32)
        self.kv_lens = (sum(levels) + own).astype(np.int32)
        next_id = 0
        col = 0
        for lvl, nb in enumerate(prefix_blocks):
            groups = fanout[lvl]
            ids = np.arange(next_id, next_id + groups * nb, dtype=np.int32).reshape(groups, nb)
            next_id += groups * nb
            group_of = (np.arange(requests) * groups) // requests
            self.table[:, col:col + nb] = ids[group_of]
            col += nb
        self._prefix_cols = col
        for r in range(requests):
            n = int(-(-own[r] // bs))
            self.table[r, col:col + n] = np.arange(next_id, next_id + n, dtype=np.int32)
            next_id += n
        self.next_id = next_id

    def step(self) -> None:
        """Every request decodes one token; a request whose last block is full gets a new
        block id."""
        bs = self.block_size
        full = (self.kv_lens % bs) == 0
        cols = self.kv_lens // bs
        for r in np.nonzero(full)[0]:
            self.table[r, cols[r]] = self.next_id
            self.next_id += 1
        self.kv_lens += 1

    def spec(self) -> dict:
        """The batch as a JSON workload spec ({"kind": "block_table"}), as a trace line."""
        bs = self.block_size
        reqs = []
        for r in range(len(self.kv_lens)):
            n = int(-(-int(self.kv_lens[r]) // bs))
            last = int(self.kv_lens[r]) - (n - 1) * bs
            reqs.append({"blocks": self.table[r, :n].tolist(),
                         "last_block_tokens": 0 if last == bs else last})
        return {"kind": "block_table", "block_size": bs, "requests": reqs}

    def jsonl_line(self) -> str:
        return json.dumps(self.spec(), separators=(",", ":"))
