"""vLLM-style decode batches as numpy block tables: a shared prefix tree of block ids, each
request's own blocks, and decode steps that add one token per request (a new block id when
the last block is full). Used by the examples, the benchmark and the tests."""
from __future__ import annotations

import json

import numpy as np


MAX_TOKENS = 1 << 22   # per request: anvil's default limits.request_tokens


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer))


def _layout_check(requests, levels, fanout, own, bs) -> np.ndarray:
    """Each request's own tokens; ValueError for a batch that cannot be laid out."""
    if not (_is_int(requests) and _is_int(bs) and requests >= 1 and bs >= 1):
        raise ValueError(f"requests {requests!r}, block_size {bs!r}: expected integers >= 1")
    if len(levels) != len(fanout):
        raise ValueError(f"{len(levels)} prefix levels but {len(fanout)} fan-outs")
    for L, g in zip(levels, fanout):
        if not (_is_int(L) and 0 <= L <= MAX_TOKENS and L % bs == 0):
            raise ValueError(f"prefix level of {L!r} tokens: expected whole blocks of {bs}")
        if not (_is_int(g) and 1 <= g <= requests):
            raise ValueError(f"fan-out {g!r}: expected an integer in [1, {requests}]")
    try:
        own = np.broadcast_to(np.asarray(own, dtype=np.int64), (requests,)).copy()
    except OverflowError as e:
        raise ValueError(f"own: {e}") from e
    total = sum(levels) + own
    if (own < 0).any() or (total < 1).any() or (total > MAX_TOKENS).any():
        raise ValueError(f"own: expected tokens >= 0, each request in [1, {MAX_TOKENS}] tokens")
    return own


class DecodeBatch:
    """Requests whose KV is `shared` groups of prefix blocks plus their own blocks.

    levels: tokens per level above the requests, e.g. (2048, 512) with fan-out (1, 16): one
    root prompt of 2048 tokens, 16 second-level prefixes of 512, requests spread over them.
    own: tokens of each request's own suffix (an int or one per request)."""

    def __init__(self, requests: int, levels=(2048, 512), fanout=(1, 16), own=120,
                 block_size: int = 16, capacity_blocks: int = 0):
        bs = block_size
        self.block_size = bs
        own = _layout_check(requests, levels, fanout, own, bs)
        prefix_blocks = [L // bs for L in levels]
        extra = capacity_blocks or 64
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
