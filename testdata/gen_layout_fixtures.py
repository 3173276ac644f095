#!/usr/bin/env python3
"""Writes the layout fixtures (tests/analyses/layout.rs): a 4-rank TP 2 x DP 2 job, twice.

- megatron4: pg_config declares Megatron's group names (TENSOR_MODEL_PARALLEL_GROUP for
  {0, 1} and {2, 3}, DATA_PARALLEL_GROUP for {0, 2} and {1, 3}, default_pg): the layout is
  declared.
- groups4: the same groups with names that say nothing (pg1..pg4): the layout is inferred
  from the collectives (stride-1 groups beside wider ones: tensor parallel; the others: data).

Per rank and step (two steps, 1000 us apart): a TP all-reduce [100, 150) in its TP group,
compute [150, 300), a DP all-reduce [300, 400) in its DP group.
Run from the repository root: python3 testdata/gen_layout_fixtures.py
"""
import json
import os

DEV = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}
AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32"


def groups(named):
    tp = "TENSOR_MODEL_PARALLEL_GROUP" if named else "pg"
    dp = "DATA_PARALLEL_GROUP" if named else "pg"
    return [
        {"pg_name": "0", "pg_desc": "default_pg", "pg_size": 4, "ranks": [0, 1, 2, 3]},
        {"pg_name": "1", "pg_desc": tp, "pg_size": 2, "ranks": [0, 1]},
        {"pg_name": "2", "pg_desc": tp, "pg_size": 2, "ranks": [2, 3]},
        {"pg_name": "3", "pg_desc": dp, "pg_size": 2, "ranks": [0, 2]},
        {"pg_name": "4", "pg_desc": dp, "pg_size": 2, "ranks": [1, 3]},
    ]


def rank_trace(r, named):
    ev = [
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": 100, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": 100, "tid": 100, "args": {"name": "thread 100 (pt_main_thread)"}},
    ]
    tp_pg, tp_ranks = ("1", [0, 1]) if r < 2 else ("2", [2, 3])
    dp_pg, dp_ranks = ("3", [0, 2]) if r % 2 == 0 else ("4", [1, 3])
    corr = 0
    for n, b in ((1, 0), (2, 1000)):
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "pid": 100,
                   "tid": 100, "ts": b, "dur": 1000, "args": {}})
        for name, ts, dur, pg, ranks, seq in ((AR, 100, 50, tp_pg, tp_ranks, n),
                                              (GEMM, 150, 150, None, None, 0),
                                              (AR, 300, 100, dp_pg, dp_ranks, n)):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100,
                       "tid": 100, "ts": b + ts - 20, "dur": 5, "args": {"correlation": corr}})
            args = {"stream": 7, "correlation": corr}
            if pg:
                args.update({"Collective name": "allreduce", "In msg nelems": 1048576,
                             "Out msg nelems": 1048576, "Group size": 2, "dtype": "Float",
                             "Process Group Name": pg,
                             "Process Group Ranks": str(ranks), "Seq": seq})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                       "ts": b + ts, "dur": dur, "args": args})
    dist = {"backend": "nccl", "rank": r, "world_size": 4, "pg_config": groups(named)}
    return {"schemaVersion": 1, "deviceProperties": [DEV], "distributedInfo": dist,
            "traceEvents": ev}


for name, named in (("megatron4", True), ("groups4", False)):
    os.makedirs(f"testdata/{name}", exist_ok=True)
    for r in range(4):
        json.dump(rank_trace(r, named), open(f"testdata/{name}/rank-{r}.json", "w"), indent=0)
