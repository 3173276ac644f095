#!/usr/bin/env python3
"""Writes the hand-checked multi-rank fixtures (testdata/cluster4, pipeline2, mismatch3, seq2,
persist3, share3) and the single-rank step-span fixture (testdata/steps_tail.json).

The expected numbers live in tests/analyses/comm_fixtures.rs and tests/analyses/stages.rs, computed by hand
from the times below.
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

# seq2: every call carries `Seq`, so calls pair by Seq, not by position. Rank 1's profile
# missed Seq 1 (step 1 has 2 calls on rank 0, 1 on rank 1: positions would not pair); Seq 3 is
# a broadcast on rank 0 but an all-gather on rank 1 (an operation mismatch at index 3); rank 1
# profiled an extra step 3 whose Seq 4 has no partner. Seq 2: rank 0 arrives at 300 and ends
# at 305 (before rank 1 arrives at 310: its transit clamps at 0); rank 1 runs [310, 400).
PG2 = [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2, "ranks": [0, 1]}]
AR2 = dict(AR_ARGS, **{"Group size": 2, "Process Group Ranks": "[0, 1]"})
BC = "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
AG = "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
r0, r1 = Rank(), Rank()
r0.step(1, 0, 1000)
r0.kernel(AR, 20, 50, 100, 100, dict(AR2, Seq=1))
r0.kernel(AR, 20, 250, 300, 5, dict(AR2, Seq=2))
r0.step(2, 1000, 1000)
r0.kernel(BC, 20, 1050, 1100, 100, dict(AR2, Seq=3, **{"Collective name": "broadcast"}))
r1.step(1, 0, 1000)
r1.kernel(AR, 20, 250, 310, 90, dict(AR2, Seq=2))
r1.step(2, 1000, 1000)
r1.kernel(AG, 20, 1050, 1100, 100, dict(AR2, Seq=3, **{"Collective name": "allgather"}))
r1.step(3, 2000, 1000)
r1.kernel(AR, 20, 2050, 2100, 100, dict(AR2, Seq=4))
for r, k in enumerate((r0, r1)):
    json.dump(trace(r, 2, k.ev, PG2), open(f"testdata/seq2/rank-{r}.json", "w"), indent=0)


def arrivals(name, computes):
    """Three ranks; per step b = 1000·(s−1): compute [b+20, b+20+C[r]), then an all-reduce
    from there to b+20+max(C)+100 (the last arriver's transfer: 100 µs)."""
    pg = [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 3, "ranks": [0, 1, 2]}]
    args = dict(AR_ARGS, **{"Group size": 3, "Process Group Ranks": "[0, 1, 2]"})
    for r in range(3):
        k = Rank()
        for s, c in enumerate(computes, start=1):
            b = 1000 * (s - 1)
            k.step(s, b, 1000)
            k.kernel("gemm", 7, b + 10, b + 20, c[r])
            k.kernel(AR, 20, b + 15, b + 20 + c[r], max(c) + 100 - c[r], args)
        json.dump(trace(r, 3, k.ev, pg), open(f"testdata/{name}/rank-{r}.json", "w"), indent=0)


# persist3: rank 2 arrives last (100 µs late) in steps 1 and 2, rank 1 in step 3; in step 4
# all arrive together (no skew: nobody is last, nobody waits). Rank 2 is the top imposer in
# exactly 2 of the 3 steps with waiting — the persistence boundary (2/3), flagged.
arrivals("persist3", [(400, 400, 500), (400, 400, 500), (400, 500, 400), (400, 400, 400)])
# share3: two steps (too few to judge persistence): rank 2 is 100 µs late in step 1 (waits
# 2 × 100), rank 1 300 µs late in step 2 (waits 2 × 300). Rank 1 imposed 600 of 800 µs of
# waiting (75% ≥ 50%): flagged by share although it topped only 1 of 2 steps.
arrivals("share3", [(400, 400, 500), (400, 700, 400)])

# steps_tail.json: one rank, host steps [0,100), [100,200), [200,300) µs. Step 1 launches a
# kernel [50, 260) that outlasts step 2's own kernel [150, 170); step 3's runs [270, 280).
# D1 = 260, D2 = max(260, 170) = 260, D3 = 280: B1 = 0, B2 = max(100, 260) = 260,
# B3 = max(200, 260) = 260, end = max(300, 280) = 300. Spans [0,260), [260,260), [260,300).
k = Rank()
for s in (1, 2, 3):
    k.step(s, 100 * (s - 1), 100)
k.kernel("long_gemm", 7, 10, 50, 210)
k.kernel("short_gemm", 7, 110, 150, 20)
k.kernel("last_gemm", 7, 210, 270, 10)
json.dump(trace(0, 1, k.ev), open("testdata/steps_tail.json", "w"), indent=0)

# low_only.json: one rank, two 1 ms steps, each filled by one kernel [b+10, b+1000) launched at
# b+1: the device is busy 99% of each step; the only finding is a low one (kernels the roofline
# cannot place), for the `--fail-on` matrix.
k = Rank()
for s in (1, 2):
    b = 1000 * (s - 1)
    k.step(s, b, 1000)
    k.kernel("gemm", 7, b + 1, b + 10, 990)
json.dump(trace(0, 1, k.ev), open("testdata/low_only.json", "w"), indent=0)

# host_lanes.json: one step [0, 100) µs. The main thread launches a kernel [5, 10) at 1 (the
# launch [1, 3) is host work of a launching thread). Thread 102 runs a cpu op [20, 60) with a
# launch call [30, 32) whose kernel the trace does not have (no correlation): no kernel is
# linked to it, so it is not a launching thread and its work is not host-bound time.
k = Rank()
k.step(1, 0, 100)
k.kernel("gemm", 7, 1, 5, 5)
k.ev[-2]["dur"] = 2
k.ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::to", "pid": 100, "tid": 102, "ts": 20,
             "dur": 40, "args": {}})
k.ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100,
             "tid": 102, "ts": 30, "dur": 2, "args": {}})
json.dump(trace(0, 1, k.ev), open("testdata/host_lanes.json", "w"), indent=0)

# steps_gap.json: one rank, host steps [0, 100) and [150, 250) µs with a pause between them;
# step 1's kernel [10, 90) is done before the pause. Step 1's span runs until step 2 starts
# on the host (the pause belongs to step 1, as a synchronous step timer counts it):
# B2 = max(150, D1 = 90) = 150. Spans [0, 150), [150, 250).
k = Rank()
k.step(1, 0, 100)
k.step(2, 150, 100)
k.kernel("gemm", 7, 5, 10, 80)
json.dump(trace(0, 1, k.ev), open("testdata/steps_gap.json", "w"), indent=0)

# slow3: three ranks, host steps of 1000 µs except step 3 (2000 µs); an all-reduce per step
# after the compute. In step 3 rank 1 computes 1400 µs (the others 400): it arrives last at the
# step's first all-reduce [1420, 1520); a second one follows at 1600 (rank 2 arrives last, 50
# µs late, all end at 1750), and ranks 0 and 2 also all-reduce in their own group "x" (rank 1
# is not in it) over [1800, 1900), while ranks 1 and 2 all-reduce in group "y" over [1850,
# 1950), arriving together (no skew: nobody is last there). Cluster times 1000, 1000, 2000, 1000, 1000: median 1000,
# MAD 0, limit 1050: step 3 is slow; its culprit rank 1 arrived last at 1 of its 3.
pg = [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 3, "ranks": [0, 1, 2]},
      {"pg_name": "x", "pg_desc": "x", "pg_size": 2, "ranks": [0, 2]},
      {"pg_name": "y", "pg_desc": "y", "pg_size": 2, "ranks": [1, 2]}]
args3 = dict(AR_ARGS, **{"Group size": 3, "Process Group Ranks": "[0, 1, 2]"})
argsx = dict(AR_ARGS, **{"Group size": 2, "Process Group Name": "x", "Process Group Ranks": "[0, 2]"})
argsy = dict(AR_ARGS, **{"Group size": 2, "Process Group Name": "y", "Process Group Ranks": "[1, 2]"})
for r in range(3):
    k = Rank()
    b = 0
    for s, dur in enumerate((1000, 1000, 2000, 1000, 1000), start=1):
        c = [400, 1400 if s == 3 else 400, 400]
        k.step(s, b, dur)
        k.kernel("gemm", 7, b + 10, b + 20, c[r])
        k.kernel(AR, 20, b + 15, b + 20 + c[r], max(c) + 100 - c[r], args3)
        if s == 3:
            late = 50 if r == 2 else 0
            k.kernel(AR, 20, b + 16, b + 1600 + late, 150 - late, args3)
            if r != 1:
                k.kernel(AR, 21, b + 17, b + 1800, 100, argsx)
            if r != 0:
                k.kernel(AR, 22, b + 18, b + 1850, 100, argsy)
        b += dur
    json.dump(trace(r, 3, k.ev, pg), open(f"testdata/slow3/rank-{r}.json", "w"), indent=0)

# pipe4: a two-stage pipeline over two steps of 1500 µs, the stages numbered against the rank
# order: ranks 2 and 3 (stage 0) compute C0 µs (step 1: 500 and 600; step 2: 500 and 800) and
# send 100 µs to ranks 0 and 1 (stage 1), which posted their receives at b+30, compute 300 µs
# (the first 50 of it overlapping the receive's end) and send back 100 µs into receives posted
# right after the forward send. Receive waits: stage 1 C0 − 10 (490 + 590, then 490 + 790),
# stage 0 250 + 250 per step.
PGP = [{"pg_name": "1", "pg_desc": "pp", "pg_size": 4, "ranks": [0, 1, 2, 3]}]
P4 = dict(P2P, **{"Process Group Ranks": "[0, 1, 2, 3]", "Group size": 4})
ranks = {r: Rank() for r in range(4)}
for s, c0s in ((1, (500, 600)), (2, (500, 800))):
    b = 1500 * (s - 1)
    for k in ranks.values():
        k.step(s, b, 1500)
    for q, c0 in zip((2, 3), c0s):
        p, sent = q - 2, b + 20 + c0
        ranks[q].kernel("fwd_gemm", 7, b + 10, b + 20, c0)
        ranks[q].kernel(SR, 20, b + 15, sent, 100, dict(P4, **{"Collective name": "send", "Dst Rank": p}))
        ranks[p].kernel(SR, 20, b + 25, b + 30, sent + 100 - (b + 30), dict(P4, **{"Collective name": "recv", "Src Rank": q}))
        ranks[p].kernel("bwd_gemm", 7, b + 40, sent + 50, 300)
        ranks[p].kernel(SR, 20, b + 45, sent + 350, 100, dict(P4, **{"Collective name": "send", "Dst Rank": q}))
        ranks[q].kernel(SR, 20, b + 50, sent + 100, 350, dict(P4, **{"Collective name": "recv", "Src Rank": p}))
# Step 2: rank 3 sends twice more to rank 1, which never receives them (a profile that
# missed the calls): two unpaired point-to-point calls on rank 3.
for at in (1300, 1400):
    ranks[3].kernel(SR, 20, 1500 + 60, 1500 + at, 50, dict(P4, **{"Collective name": "send", "Dst Rank": 1}))
for r, k in ranks.items():
    json.dump(trace(r, 4, k.ev), open(f"testdata/pipe4/rank-{r}.json", "w"), indent=0)

# chain3: rank 0 and rank 1 share group "a", ranks 1 and 2 group "b" (rank 0 is not in it).
# On a common clock: "a" all-reduce ends at 300 µs on ranks 0 and 1, "b" at 600 on ranks 1
# and 2. Rank 1's clock runs 5 ms ahead, rank 2's 8 ms: rank 1 aligns to rank 0 (−5 ms), and
# rank 2 to rank 1 once rank 1 is aligned (−8 ms, via 1).
PGC = [{"pg_name": "a", "pg_desc": "a", "pg_size": 2, "ranks": [0, 1]},
       {"pg_name": "b", "pg_desc": "b", "pg_size": 2, "ranks": [1, 2]}]
GA = dict(AR_ARGS, **{"Group size": 2, "Process Group Name": "a", "Process Group Ranks": "[0, 1]"})
GB = dict(AR_ARGS, **{"Group size": 2, "Process Group Name": "b", "Process Group Ranks": "[1, 2]"})
for r, skew in ((0, 0), (1, 5000), (2, 8000)):
    k = Rank()
    k.step(1, 0, 1000)
    if r in (0, 1):
        k.kernel(AR, 20, 50, 100 + 50 * r, 200 - 50 * r, GA)
    if r in (1, 2):
        k.kernel(AR, 21, 350, 400 + 50 * (r - 1), 200 - 50 * (r - 1), GB)
    json.dump(trace(r, 3, k.ev, PGC, skew_us=skew), open(f"testdata/chain3/rank-{r}.json", "w"), indent=0)

# pre_window.json: the profiler starts with work queued on stream 7 (kernels A [5, 80) and
# B [80, 120), no launching call in the trace), then steps 1 [0, 100), 2 [100, 200),
# 3 [200, 300) launch C [120, 150), D [150, 190), E [210, 250). A and B belong to no step;
# step 1 starts when they end (120): spans [120, 150), [150, 200), [200, 300).
k = Rank()
for n, b in ((1, 0), (2, 100), (3, 200)):
    k.step(n, b, 100)
k.ev.append({"ph": "X", "cat": "kernel", "name": "queued_a", "pid": 0, "tid": 7, "ts": 5,
             "dur": 75, "args": {"stream": 7, "correlation": 900}})
k.ev.append({"ph": "X", "cat": "kernel", "name": "queued_b", "pid": 0, "tid": 7, "ts": 80,
             "dur": 40, "args": {"stream": 7, "correlation": 901}})
k.kernel("gemm_c", 7, 10, 120, 30)
k.kernel("gemm_d", 7, 110, 150, 40)
k.kernel("gemm_e", 7, 205, 210, 40)
t = trace(0, 1, k.ev)
del t["distributedInfo"]
json.dump(t, open("testdata/pre_window.json", "w"), indent=0)

# deepep.json: one step [0, 1000) µs; a GEMM [100, 400) and DeepEP's dispatch [400, 700) and
# combine [700, 800): 400 µs of communication, no NCCL anywhere.
k = Rank()
k.step(1, 0, 1000)
k.kernel("sm90_gemm_bf16", 7, 10, 100, 300)
k.kernel("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*)", 8, 20, 400, 300)
k.kernel("void deep_ep::intranode::combine<bf16, 8>(int4*, float*)", 8, 30, 700, 100)
json.dump(trace(0, 1, k.ev), open("testdata/deepep.json", "w"), indent=0)

# late3: three ranks, two steps of 1030 µs from b = 0, 1030. Ranks 0 and 1 launch a gemm at
# b+10 that runs [b+20, b+820), then the all-reduce [b+820, b+1020). Rank 2 enters each step
# 100 µs late (its step and work start at b+100): gemm [b+120, b+920), all-reduce
# [b+920, b+1020). Ranks 0 and 1 wait 100 µs per step for rank 2; entering with them, every
# all-reduce would end at b+920.
PG3 = [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 3, "ranks": [0, 1, 2]}]
AR3 = dict(AR_ARGS, **{"Group size": 3, "Process Group Ranks": "[0, 1, 2]"})
for r in range(3):
    k = Rank()
    late = 100 if r == 2 else 0
    for s, b in ((1, 0), (2, 1030)):
        k.step(s, b + late, 1030 - late)
        k.kernel("gemm", 7, b + late + 10, b + late + 20, 800)
        k.kernel(AR, 20, b + late + 15, b + late + 820, 200 - late, AR3)
    json.dump(trace(r, 3, k.ev, PG3), open(f"testdata/late3/rank-{r}.json", "w"), indent=0)

# queued.json: three host steps of 50 µs from b = 0, 50, 100, each launching two 40 µs
# kernels at b+5 and b+6 (calls of 5 µs). The device runs 80 µs per step, so from step 2 on
# it runs a step behind: each step's first kernel waits on its stream behind the kernels
# the step before launched, which no fix of the host moves.
k = Rank()
free = 0
for s, b in ((1, 0), (2, 50), (3, 100)):
    k.step(s, b, 50)
    for launch in (b + 5, b + 6):
        start = max(launch + 5, free)
        k.kernel("gemm", 7, launch, start, 40)
        free = start + 40
t = trace(0, 1, k.ev)
del t["distributedInfo"]
json.dump(t, open("testdata/queued.json", "w"), indent=0)
