#!/usr/bin/env python3
"""Writes the hand-checked communication fixtures (testdata/cluster4, testdata/pipeline2).

The expected numbers live in tests/comm_fixtures.rs, computed by hand from the times below.
Run from the repository root: python3 testdata/gen_comm_fixtures.py
"""
import json

DEV = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}


def trace(rank, world, events, pg=None, skew_us=0):
    meta = [
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": 100, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": 100, "tid": 100, "args": {"name": "thread 100 (pt_main_thread)"}},
    ]
    dist = {"backend": "nccl", "rank": rank, "world_size": world}
    if pg:
        dist["pg_config"] = pg
    for e in events:
        e["ts"] = e["ts"] + skew_us
    return {"schemaVersion": 1, "deviceProperties": [DEV], "distributedInfo": dist,
            "traceEvents": meta + events}


class Rank:
    def __init__(self):
        self.ev = []
        self.corr = 0

    def step(self, n, ts, dur):
        self.ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}",
                        "pid": 100, "tid": 100, "ts": ts, "dur": dur, "args": {}})

    def kernel(self, name, stream, launch, ts, dur, args=None):
        self.corr += 1
        self.ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100,
                        "tid": 100, "ts": launch, "dur": 5, "args": {"correlation": self.corr}})
        a = {"stream": stream, "correlation": self.corr}
        a.update(args or {})
        self.ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
                        "ts": ts, "dur": dur, "args": a})


AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
AR_ARGS = {"Collective name": "allreduce", "In msg nelems": 4194304, "Out msg nelems": 4194304,
           "Group size": 4, "dtype": "Float", "Process Group Name": "0",
           "Process Group Ranks": "[0, 1, 2, 3]"}
PG4 = [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 4, "ranks": [0, 1, 2, 3]}]

# cluster4: per step b (0 or 1000 µs): compute [b+20, b+20+C), the all-reduce starts when the
# compute ends and all four end at b+620 (the last arriver, rank 3, computes 500 µs, the others
# 400 µs; transfer 100 µs). Rank 2's clock runs 5 ms ahead.
for r in range(4):
    k = Rank()
    c = 500 if r == 3 else 400
    for s, b in ((1, 0), (2, 1000)):
        k.step(s, b, 1000)
        k.kernel("gemm", 7, b + 10, b + 20, c)
        k.kernel(AR, 20, b + 15, b + 20 + c, 600 - c, AR_ARGS)
    t = trace(r, 4, k.ev, PG4, skew_us=5000 if r == 2 else 0)
    json.dump(t, open(f"testdata/cluster4/rank-{r}.json", "w"), indent=0)

# pipeline2: rank 0 (stage 0) computes [20, 520) and sends 2 MiB to rank 1 over [520, 620);
# rank 1 posted its receive at 30, then computes [620, 920) and sends the gradient back over
# [920, 1000) into rank 0's receive posted at 620.
P2P = {"dtype": "BFloat16", "In msg nelems": 1048576, "Out msg nelems": 1048576,
       "Process Group Name": "1", "Process Group Ranks": "[0, 1]", "Group size": 2}
SR = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"
r0, r1 = Rank(), Rank()
for k in (r0, r1):
    k.step(1, 0, 1100)
r0.kernel("fwd_gemm", 7, 10, 20, 500)
r0.kernel(SR, 20, 15, 520, 100, dict(P2P, **{"Collective name": "send", "Dst Rank": 1}))
r0.kernel(SR, 20, 600, 620, 380, dict(P2P, **{"Collective name": "recv", "Src Rank": 1}))
r1.kernel(SR, 20, 25, 30, 590, dict(P2P, **{"Collective name": "recv", "Src Rank": 0}))
r1.kernel("bwd_gemm", 7, 40, 620, 300)
r1.kernel(SR, 20, 45, 920, 80, dict(P2P, **{"Collective name": "send", "Dst Rank": 0}))
for r, k in enumerate((r0, r1)):
    json.dump(trace(r, 2, k.ev), open(f"testdata/pipeline2/rank-{r}.json", "w"), indent=0)

# mismatch3: rank 0 all-reduces in steps 1 and 2, rank 1 only in step 1 (a mismatch in step
# 2), rank 2 profiled step 1 only (not a mismatch: it did not profile step 2).
PG3 = [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 3, "ranks": [0, 1, 2]}]
AR3 = dict(AR_ARGS, **{"Group size": 3, "Process Group Ranks": "[0, 1, 2]"})
for r in range(3):
    k = Rank()
    for s, b in ((1, 0), (2, 1000)):
        if r == 2 and s == 2:
            continue
        k.step(s, b, 1000)
        k.kernel("gemm", 7, b + 10, b + 20, 400)
        if not (r == 1 and s == 2):
            k.kernel(AR, 20, b + 15, b + 420, 200, AR3)
    json.dump(trace(r, 3, k.ev, PG3), open(f"testdata/mismatch3/rank-{r}.json", "w"), indent=0)
