#!/usr/bin/env python3
"""Independent cross-check of the wait/transit unions on a gloo job (tests/analyses/real_comm.rs).

Reads the Chrome traces with Decimal timestamps (exact ns), matches the k-th `gloo:<op>`
transfer of every rank, shifts each rank by the offsets given on the command line, and
prints per collective type: the Σ of member waits (the old, double-counting figure) and
the Σ over (rank, step) of the union of waiting / transit intervals (docs/metrics.md, "Wait"),
plus each last arriver's imposed wait as a union.

usage: crosscheck_gloo_waits.py DIR OFFSET_NS...   (offsets in rank order)
"""
import gzip, json, sys
from decimal import Decimal
from pathlib import Path


def ns(x):
    return int(Decimal(str(x)) * 1000)


def load(path):
    op = gzip.open if str(path).endswith(".gz") else open
    with op(path, "rt") as f:
        return json.loads(f.read(), parse_float=Decimal)


def union(iv):
    tot, cur = 0, None
    for s, e in sorted(x for x in iv if x[1] > x[0]):
        if cur is None or s > cur[1]:
            if cur:
                tot += cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    return tot + (cur[1] - cur[0] if cur else 0)


def main():
    d, offsets = Path(sys.argv[1]), [int(x) for x in sys.argv[2:]]
    ranks = {}
    for p in sorted(d.glob("*.json*")):
        t = load(p)
        rank = t["distributedInfo"]["rank"]
        ev = [e for e in t["traceEvents"] if e.get("ph") == "X"]
        steps = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), int(e["name"].split("#")[1]))
                 for e in ev if e["name"].startswith("ProfilerStep#")]
        calls = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"])
                       for e in ev if e["name"].startswith("gloo:"))
        ranks[rank] = (steps, calls)
    n = min(len(c) for _, c in ranks.values())
    sum_wait, waits, transits, imposed = {}, {}, {}, {}
    for k in range(n):
        members = []
        for r in sorted(ranks):
            steps, calls = ranks[r]
            s, e, name = calls[k]
            step = next((no for a, b, no in steps if a <= s < b), None)
            members.append((r, s + offsets[r], e + offsets[r], step, name))
        last = max(m[1] for m in members)
        arriver = min(m[0] for m in members if m[1] == last)
        op = members[0][4]
        skew = last - min(m[1] for m in members)
        for r, s, e, step, _ in members:
            sum_wait[op] = sum_wait.get(op, 0) + last - s
            waits.setdefault((op, r, step), []).append((s, last))
            transits.setdefault((op, r, step), []).append((last, e))
            if skew > 0:
                imposed.setdefault((arriver, r, step), []).append((s, last))
    for op in sorted(sum_wait):
        w = sum(union(v) for (o, _, _), v in waits.items() if o == op)
        t = sum(union(v) for (o, _, _), v in transits.items() if o == op)
        print(f"{op}: instances {n} sum_of_waits {sum_wait[op]} wait_union {w} "
              f"transit_union {t} wait_ratio {w / (w + t):.6f}")
    for a in sorted(ranks):
        print(f"imposed by rank {a}: {sum(union(v) for (x, _, _), v in imposed.items() if x == a)}")


if __name__ == "__main__":
    main()
