"""Writes the Flight Recorder fixtures in testdata/flight/ (run from testdata/).

Each dump has the keys of PyTorch's FlightRecorder dump version 2.10 (torch/csrc/
distributed/c10d/FlightRecorderDetail.hpp): pickles as torch writes them (protocol 2, one
per rank, `nccl_trace_rank_<rank>`), JSON as `_dump_nccl_trace_json` writes it. The truths
each test checks are in the comments.
"""
import json
import os
import pickle


def entry(rid, pg, seq, op, state, sizes=((1024,),), dtype="Float", p2p_seq=0, is_p2p=False,
          t=1_000_000_000):
    return {
        "record_id": rid,
        "pg_id": int(pg[0]),
        "process_group": pg,
        "thread_name": "pt_nccl_watchdg",
        "thread_id": "140001",
        "collective_seq_id": 0 if is_p2p else seq,
        "p2p_seq_id": p2p_seq,
        "op_id": rid,
        "profiling_name": op,
        "time_created_ns": t + rid * 1000,
        "duration_ms": 0.25 if state == "completed" else None,
        "input_sizes": [list(s) for s in sizes],
        "input_dtypes": [dtype] * len(sizes),
        "output_sizes": [list(s) for s in sizes],
        "output_dtypes": [dtype] * len(sizes),
        "state": state,
        "time_discovered_started_ns": None if state == "scheduled" else t + rid * 1000 + 10,
        "time_discovered_completed_ns": t + rid * 1000 + 20 if state == "completed" else None,
        "retired": state == "completed",
        "timeout_ms": 600000,
        "is_p2p": is_p2p,
    }


def dump(groups, entries):
    d = {
        "version": "2.10",
        "comm_lib_version": "2.21.5",
        "pg_config": {
            name: {"name": name, "desc": desc, "ranks": str(ranks)}
            for name, desc, ranks in groups
        },
        "pg_status": {},
        "entries": entries,
    }
    for e in entries:
        if e["duration_ms"] is None:
            del e["duration_ms"]
    return d


def hang4():
    # default_pg (ranks 0-3): all reach all_reduce #11 and complete it; ranks 0, 1, 3 enter
    # #12 and wait in it; rank 2 never enters #12. Rank 1 also left a send to rank 0 open
    # in the pipeline group pp (ranks 0, 1). Truth: rank 2 is absent from #12 of
    # default_pg; 0, 1, 3 wait; timeout 600000 ms.
    os.makedirs("flight/hang4", exist_ok=True)
    world = ("0", "default_pg", [0, 1, 2, 3])
    pp = ("1", "pp:0", [0, 1])
    for r in range(4):
        groups = [world] + ([pp] if r < 2 else [])
        es = [entry(k, ("0", "default_pg"), k, "nccl:all_reduce", "completed") for k in range(1, 12)]
        if r != 2:
            es.append(entry(12, ("0", "default_pg"), 12, "nccl:all_reduce", "started"))
        if r == 1:
            es.append(entry(13, ("1", "pp:0"), 0, "nccl:send 1->0", "started", p2p_seq=4,
                            is_p2p=True))
        with open(f"flight/hang4/nccl_trace_rank_{r}", "wb") as f:
            f.write(pickle.dumps(dump(groups, es), protocol=2))


def desync3():
    # JSON dumps, one group of 3: at #5 rank 1 runs all_gather where ranks 0 and 2 run
    # all_reduce; all three wait. Truth: a desync at #5, rank 1.
    os.makedirs("flight/desync3", exist_ok=True)
    g = [("0", "default_pg", [0, 1, 2])]
    for r in range(3):
        es = [entry(k, ("0", "default_pg"), k, "nccl:all_reduce", "completed") for k in range(1, 5)]
        op = "nccl:all_gather" if r == 1 else "nccl:all_reduce"
        es.append(entry(5, ("0", "default_pg"), 5, op, "started"))
        with open(f"flight/desync3/fr_{r}.json", "w") as f:
            json.dump(dump(g, es), f, sort_keys=True)


def stall3():
    # A group of 3 whose rank 2 wrote no dump; ranks 0 and 1 entered broadcast #3 and did not
    # complete it. Truth: stalled at #3, no dump from rank 2.
    os.makedirs("flight/stall3", exist_ok=True)
    g = [("0", "default_pg", [0, 1, 2])]
    for r in range(2):
        es = [entry(1, ("0", "default_pg"), 1, "nccl:broadcast", "completed"),
              entry(2, ("0", "default_pg"), 2, "nccl:broadcast", "completed"),
              entry(3, ("0", "default_pg"), 3, "nccl:broadcast", "started")]
        with open(f"flight/stall3/nccl_trace_rank_{r}", "wb") as f:
            f.write(pickle.dumps(dump(g, es), protocol=2))


def clean2():
    # Everything completed; rank 1's dump is cut short (unreadable): read rank 0, skip 1.
    os.makedirs("flight/clean2", exist_ok=True)
    g = [("0", "default_pg", [0, 1])]
    es = [entry(k, ("0", "default_pg"), k, "nccl:all_reduce", "completed") for k in range(1, 4)]
    data = pickle.dumps(dump(g, es), protocol=2)
    with open("flight/clean2/nccl_trace_rank_0", "wb") as f:
        f.write(data)
    with open("flight/clean2/nccl_trace_rank_1", "wb") as f:
        f.write(data[:200])


hang4()
desync3()
stall3()
clean2()
