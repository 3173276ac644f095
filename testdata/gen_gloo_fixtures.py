#!/usr/bin/env python3
"""Writes CPU-only gloo jobs with a host stall (testdata/gloo_stall3, testdata/gloo_absorb3).

Three ranks on one clock, `distributedInfo` backend gloo. Each step t (µs): the main thread
(tid 100) runs `DistributedDataParallel.forward` from t+1000 with its `aten::mm` ops, enqueues
`c10d::allreduce_` when the forward ends, and a `gloo:all_reduce` on the run-loop thread (tid
200) runs from then until 20 ms after the last rank enqueued; `aten::add_` (the optimizer) runs
50 ms after the transfer ends, and the step ends 60 ms after it.

- gloo_stall3: forwards of 400 ms; in step 3 rank 1's forward is mm 200 ms, then 300 ms with
  nothing recorded, then mm 200 ms. Steps take 481 ms, step 3 781 ms (slow, culprit rank 1).
- gloo_absorb3: forwards of 400 / 500 / 500 / 400 / 500 ms on every rank, except step 3 on
  rank 1: mm 200 ms, 300 ms with nothing, and no second mm (500 ms, as the others would have
  taken, but they took 400): no step is an outlier, rank 1 stalled 300 ms, the others waited
  100 ms for it.

The expected numbers are in tests/gloo_stall.rs. Run from the repository root.
"""
import json

N = 262144  # floats per bucket


def x(name, cat, tid, ts, dur, args=None):
    return {"ph": "X", "cat": cat, "name": name, "pid": 100, "tid": tid, "ts": ts, "dur": dur,
            "args": args or {}}


def job(forwards, out):
    """forwards[s][r]: list of (mm start offset, mm dur) inside the forward, and its length."""
    ranks = {r: [] for r in range(3)}
    t = 0
    for s, per_rank in enumerate(forwards, start=1):
        ends = {r: t + 1000 + per_rank[r][1] for r in range(3)}
        t_end = max(ends.values()) + 20_000
        for r in range(3):
            ev = ranks[r]
            mms, length = per_rank[r]
            ev.append(x(f"ProfilerStep#{s}", "user_annotation", 100, t, t_end + 60_000 - t))
            ev.append(x("DistributedDataParallel.forward", "user_annotation", 100, t + 1000, length))
            for off, dur in mms:
                ev.append(x("aten::mm", "cpu_op", 100, t + 1000 + off, dur,
                            {"Input Dims": [[1024, 256], [256, 2000]], "Input type": ["float", "float"]}))
            ev.append(x("c10d::allreduce_", "cpu_op", 100, ends[r], 500,
                        {"Input Dims": [[[N]], [], [], [], [], []],
                         "Input type": ["TensorList", "", "", "", "Scalar", "Scalar"]}))
            ev.append(x("gloo:all_reduce", "user_annotation", 200, ends[r], t_end - ends[r],
                        {"Input Dims": [[N]], "Input type": ["float"]}))
            ev.append(x("aten::add_", "cpu_op", 100, t_end + 500, 50_000))
        t = t_end + 60_000
    for r, ev in ranks.items():
        meta = [
            {"name": "process_labels", "ph": "M", "ts": 0, "pid": 100, "tid": 0, "args": {"labels": "CPU"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": 100, "tid": 100,
             "args": {"name": "thread 100 (pt_main_thread)"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": 100, "tid": 200,
             "args": {"name": "thread 200 (pt_gloo_runloop)"}},
        ]
        dist = {"backend": "gloo", "rank": r, "world_size": 3,
                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 3, "ranks": [0, 1, 2]}]}
        trace = {"schemaVersion": 1, "deviceProperties": [], "distributedInfo": dist,
                 "traceEvents": meta + ev}
        json.dump(trace, open(f"{out}/rank-{r}.json", "w"), indent=0)


NORMAL = ([(0, 200_000), (200_000, 200_000)], 400_000)
STALL = ([(0, 200_000), (500_000, 200_000)], 700_000)
job([[NORMAL] * 3, [NORMAL] * 3, [NORMAL, STALL, NORMAL], [NORMAL] * 3, [NORMAL] * 3],
    "testdata/gloo_stall3")

FOUR = NORMAL
FIVE = ([(0, 250_000), (250_000, 250_000)], 500_000)
ABSORBED = ([(0, 200_000)], 500_000)
job([[FOUR] * 3, [FIVE] * 3, [FOUR, ABSORBED, FOUR], [FOUR] * 3, [FIVE] * 3],
    "testdata/gloo_absorb3")
