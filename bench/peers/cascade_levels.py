"""A decode batch's prefix tree as the levels of FlashInfer's multi-level cascade attention
(bench/peers/peer_cascade.py gives the mapping): pure Python, so the mapping is tested without
a GPU (tests/cascade_levels.py)."""
import math


def paths(parents, requests):
    """Each request's root-to-node path of node ids."""
    out = []
    for r in requests:
        p = []
        while r >= 0:
            p.append(r)
            r = parents[r]
        out.append(p[::-1])
    return out


def levels(parents, lens, requests, page_size):
    """The cascade's levels. Returns (request order, number of pages, node -> its page ids,
    per level (qo_indptr, kv_indptr, kv page ids, last page lengths))."""
    pre = {}  # depth-first order of the nodes, children in the order given
    children = [[] for _ in parents]
    for n, p in enumerate(parents):
        if p >= 0:
            children[p].append(n)
    stack = [n for n, p in enumerate(parents) if p < 0][::-1]
    while stack:
        n = stack.pop()
        pre[n] = len(pre)
        stack.extend(children[n][::-1])
    ps = paths(parents, requests)
    order = sorted(range(len(requests)), key=lambda r: [pre[n] for n in ps[r]])
    ps = [ps[r] for r in order]
    pages, first = 0, {}
    for n, L in enumerate(lens):
        first[n] = pages
        pages += max(1, math.ceil(L / page_size))
    depth = max(len(p) for p in ps)
    out = []
    for lv in range(depth):
        def entry(p):
            if lv == depth - 1:
                return p[-1]
            return p[lv] if lv < len(p) - 1 else None
        qo, kv, idx, last = [0], [0], [], []
        prev = object()
        for r, p in enumerate(ps):
            e = entry(p)
            if r > 0 and e == prev:  # same entry as the request before: one more query row
                qo[-1] += 1
                continue
            prev = e
            qo.append(qo[-1] + 1)
            if e is None:
                last.append(0)
            else:
                n_pages = max(1, math.ceil(lens[e] / page_size))
                idx.extend(range(first[e], first[e] + n_pages))
                last.append(lens[e] - (n_pages - 1) * page_size)
            kv.append(len(idx))
        out.append((qo, kv, idx, last))
    return order, pages, first, out
