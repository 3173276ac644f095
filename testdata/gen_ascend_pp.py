#!/usr/bin/env python3
"""Writes the trimmed Ascend pipeline fixtures (tests/inputs/ascend_summary.rs).

ascend/pp4: a 4-rank torch_npu job, TP 1 x PP 2 x DP 2 (Megatron order: stage 0 = ranks
0, 1; stage 1 = ranks 2, 3), three steps (5, 6, 7) of GPipe with 4 micro-batches. Stage 1
computes 1.4x stage 0 (forward 5.6 vs 4 ms, backward 11.2 vs 8 ms per micro-batch): a
pipeline-stage imbalance. Per step, after the pipeline: the DP all-reduce ({0, 1} and
{2, 3}), then the model-parallel all-reduce ({0, 2} and {1, 3}, the grad norm) where the
stage-0 ranks arrive last (their last backward waited on stage 1's).
  - ranks 0 and 2 keep the whole text export (trace_view.json, step_trace_time.csv,
    communication.json, profiler_info, profiler_metadata);
  - rank 1 kept only analysis.db (StepTraceTime, CommAnalyzerTime, CommAnalyzerBandwidth),
    communication.json and step_trace_time.csv: summary only;
  - rank 3 kept only step_trace_time.csv and communication.json: summary only.

ascend/multidev: one process that profiled four devices: an analysis.db in WAL mode whose
StepTraceTime has a deviceId column (devices 0..3) and a NULL step.

Run from the repository root: python3 testdata/gen_ascend_pp.py
"""
import json
import os
import shutil
import sqlite3

OUT = "testdata/ascend/pp4"
BASE_US = 1_736_410_000_000_000  # µs since the epoch, as torch_npu writes
M = 4  # micro-batches
FWD = {0: 4000, 1: 5600}  # µs per micro-batch
BWD = {0: 8000, 1: 11200}
XFER = 300  # µs per activation or gradient transfer
AR_DP = 1500  # µs of DP all-reduce transit
AR_MP = 200
STEPS = [5, 6, 7]
STAGE = {0: 0, 1: 0, 2: 1, 3: 1}
DP_GROUP = {0: "dp0", 1: "dp0", 2: "dp1", 3: "dp1"}
PP_GROUP = {0: "pp0", 1: "pp1", 2: "pp0", 3: "pp1"}
GROUP_ID = {
    "dp0": "10.0.0.1%eth0_60000_0_1736410000000101",
    "dp1": "10.0.0.1%eth0_60000_0_1736410000000102",
    "pp0": "10.0.0.1%eth0_60000_0_1736410000000201",
    "pp1": "10.0.0.1%eth0_60000_0_1736410000000202",
    "world": "10.0.0.1%eth0_60000_0_1736410000000001",
}


def double_hash(s):
    """HCCL's short name of a group id (msprof-analyze's double_hash)."""
    a = b = 0
    for c in s:
        a = (a * 29 + ord(c)) & 0xFFFFFFFF
        b = (b * 131 + ord(c)) & 0xFFFFFFFF
    return str((a << 32) | b)


HASH = {k: double_hash(v) for k, v in GROUP_ID.items()}
MEMBERS = {"dp0": [0, 1], "dp1": [2, 3], "pp0": [0, 2], "pp1": [1, 3]}


def jitter(rank, k):
    """A deterministic ±0.5% per rank and op, so that peers are not identical."""
    return 1.0 + (((rank * 7 + k * 13) % 11) - 5) / 1000.0


def program(rank):
    """The rank's ops in order: ('c', name, µs) compute, ('p', kind, peer_tag, group) p2p,
    ('a', group) all-reduce."""
    s = STAGE[rank]
    ops = []
    k = 0
    if s == 0:
        for i in range(M):
            ops.append(("c", "aclnnMm_Forward", FWD[0] * jitter(rank, k)))
            k += 1
            ops.append(("p", "send", ("f", i), PP_GROUP[rank]))
        for i in range(M):
            ops.append(("p", "receive", ("b", i), PP_GROUP[rank]))
            ops.append(("c", "aclnnMm_Backward", BWD[0] * jitter(rank, k)))
            k += 1
    else:
        for i in range(M):
            ops.append(("p", "receive", ("f", i), PP_GROUP[rank]))
            ops.append(("c", "aclnnFlashAttention_Forward", FWD[1] * jitter(rank, k)))
            k += 1
        for i in range(M):
            ops.append(("c", "aclnnFlashAttention_Backward", BWD[1] * jitter(rank, k)))
            k += 1
            ops.append(("p", "send", ("b", i), PP_GROUP[rank]))
    ops.append(("a", DP_GROUP[rank], AR_DP))
    ops.append(("a", PP_GROUP[rank], AR_MP))
    return ops


def simulate(t0):
    """Runs one step from t0 (µs) on every rank: each op's (start, end), rendezvous for
    p2p pairs and all-reduces."""
    progs = {r: program(r) for r in range(4)}
    pos = {r: 0 for r in range(4)}
    clock = {r: float(t0) for r in range(4)}
    out = {r: [] for r in range(4)}
    posted = {}  # key -> {rank: post time}
    while any(pos[r] < len(progs[r]) for r in range(4)):
        moved = False
        for r in range(4):
            while pos[r] < len(progs[r]):
                op = progs[r][pos[r]]
                if op[0] == "c":
                    out[r].append(("compute", op[1], clock[r], clock[r] + op[2], None))
                    clock[r] += op[2]
                    pos[r] += 1
                    moved = True
                    continue
                key = (op[2], op[3]) if op[0] == "p" else ("ar", op[1], pos[r])
                members = MEMBERS[op[3]] if op[0] == "p" else MEMBERS[op[1]]
                posted.setdefault(key, {})[r] = clock[r]
                if len(posted[key]) < len(members):
                    break
                begin = max(posted[key].values())
                transit = XFER if op[0] == "p" else op[2]
                end = begin + transit
                for m in members:
                    mop = progs[m][pos[m]]
                    name = mop[1] if mop[0] == "p" else "allReduce"
                    group = mop[3] if mop[0] == "p" else mop[1]
                    out[m].append(("comm", name, posted[key][m], end, group, transit))
                    clock[m] = end
                    pos[m] += 1
                moved = True
        assert moved, "deadlock"
    return out


def run():
    timeline = {r: [] for r in range(4)}
    t0 = BASE_US
    steps = []
    for n in STEPS:
        res = simulate(t0)
        end = max(o[3] for r in res for o in res[r])
        for r in range(4):
            timeline[r].append((n, t0, end, res[r]))
        steps.append((n, t0, end))
        t0 = end + 1000
    return timeline


def op_names(timeline, rank):
    """HCCL names its ops `hcom_{type}__{group tail}_{index}_1`, the index counting the
    group's ops: the same name on every member."""
    count = {}
    names = []
    for (_, _, _, ops) in timeline[rank]:
        row = []
        for o in ops:
            if o[0] != "comm":
                row.append(None)
                continue
            g = o[4]
            k = count.get(g, 0)
            count[g] = k + 1
            row.append(f"hcom_{o[1]}__{HASH[g][-3:]}_{k}_1")
        names.append(row)
    return names


def us(x):
    return f"{x:.3f}"


def trace_view(timeline, rank, names):
    ev = [
        {"name": "process_name", "pid": 100, "tid": 0, "args": {"name": "Python"}, "ph": "M"},
        {"name": "process_name", "pid": 300, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
        {"name": "process_labels", "pid": 300, "tid": 0, "args": {"labels": "NPU"}, "ph": "M"},
        {"name": "thread_name", "pid": 300, "tid": 2, "args": {"name": "Stream 2"}, "ph": "M"},
        {"name": "process_name", "pid": 400, "tid": 0, "args": {"name": "HCCL"}, "ph": "M"},
        {"name": "process_name", "pid": 200, "tid": 0, "args": {"name": "CANN"}, "ph": "M"},
    ]
    lanes = {}
    conn = [0]

    def launch(name, start, step_start, k):
        """The CANN call that launched a device task, linked by its connection id: the host
        runs ahead, launching the step's tasks 20 µs apart from the step's start (never
        after the task itself starts)."""
        conn[0] += 1
        at = min(step_start + 1 + 20 * k, start)
        ev.append({"ph": "X", "name": f"AscendCL@{name}", "pid": 200, "tid": 101, "ts": us(at),
                   "dur": 10, "args": {"Mode": "ACL_OP", "level": "acl",
                                       "connection_id": conn[0]}})
        return conn[0]
    for (n, t0, end, ops), row in zip(timeline[rank], names):
        ev.append({"ph": "X", "name": f"ProfilerStep#{n}", "pid": 100, "tid": 100,
                   "ts": us(t0), "dur": round(end - t0, 3), "cat": "cpu_op", "args": {}})
        for k, (o, name) in enumerate(zip(ops, row)):
            if o[0] == "compute":
                c = launch(o[1].split("_")[0], o[2], t0, k)
                ev.append({"ph": "X", "name": o[1], "pid": 300, "tid": 2, "ts": us(o[2]),
                           "dur": round(o[3] - o[2], 3),
                           "args": {"Task Type": "AI_CORE", "Physic Stream Id": 2,
                                    "connection_id": c}})
                continue
            c = launch("Hccl" + o[1].capitalize(), o[2], t0, k)
            tid = lanes.setdefault(o[4], len(lanes))
            ev.append({"ph": "X", "name": name, "pid": 400, "tid": tid, "ts": us(o[2]),
                       "dur": round(o[3] - o[2], 3),
                       "args": {"data_type": "BF16", "count": 1048576, "alg_type": "MESH",
                                "connection_id": c}})
    for g, tid in lanes.items():
        ev.append({"name": "thread_name", "pid": 400, "tid": tid,
                   "args": {"name": f"Group {HASH[g]} Communication"}, "ph": "M"})
    return ev


def step_rows(timeline, rank):
    """torch_npu's step summary from the timeline: no overlap (one stream); the bubble is
    the time in receives; Stage is the step less its bubble."""
    rows = []
    for (n, t0, end, ops) in timeline[rank]:
        comp = sum(o[3] - o[2] for o in ops if o[0] == "compute")
        comm = sum(o[3] - o[2] for o in ops if o[0] == "comm")
        recv = sum(o[3] - o[2] for o in ops if o[0] == "comm" and o[1] == "receive")
        span = end - t0
        free = span - comp - comm
        rows.append((n, comp, comm, 0.0, comm, free, span - recv, recv, comm - recv, 0.0))
    return rows


def write_csv(path, rows):
    with open(path, "w") as f:
        f.write("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,"
                "Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n")
        for r in rows:
            f.write(",".join([str(r[0])] + [repr(round(x, 3)) for x in r[1:]]) + "\n")


def comm_entries(timeline, rank, names):
    """communication.json's entries: per step, p2p and collective ops keyed `op@group`."""
    out = {}
    for (n, _, _, ops), row in zip(timeline[rank], names):
        step = {"p2p": {}, "collective": {}}
        for o, name in zip(ops, row):
            if o[0] != "comm":
                continue
            elapse = (o[3] - o[2]) / 1000.0
            transit = o[5] / 1000.0
            mb = 2.097152
            kind = "p2p" if o[1] in ("send", "receive") else "collective"
            step[kind][f"{name}@{HASH[o[4]]}"] = {
                "Communication Time Info": {
                    "Start Timestamp(us)": o[2],
                    "Elapse Time(ms)": elapse,
                    "Transit Time(ms)": transit,
                    "Wait Time(ms)": round(elapse - transit, 6),
                    "Synchronization Time(ms)": 0,
                    "Idle Time(ms)": 0,
                    "Wait Time Ratio": round((elapse - transit) / elapse, 4) if elapse else 0,
                    "Synchronization Time Ratio": 0,
                },
                "Communication Bandwidth Info": {
                    "HCCS": {"Transit Size(MB)": mb, "Transit Time(ms)": transit,
                             "Bandwidth(GB/s)": round(mb / transit, 4) if transit else 0,
                             "Large Packet Ratio": 0, "Size Distribution": {}},
                },
            }
        out[f"step{n}"] = step
    return out


def write_db(path, rows, comm):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StepTraceTime (step TEXT, computing NUMERIC, "
                "communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, "
                "free NUMERIC, stage NUMERIC, bubble NUMERIC, "
                "communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)")
    for r in rows:
        con.execute("INSERT INTO StepTraceTime VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (str(r[0]),) + tuple(round(x, 3) for x in r[1:]))
    con.execute("CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, "
                "start_timestamp NUMERIC, elapse_time NUMERIC, transit_time NUMERIC, "
                "wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, "
                "type TEXT)")
    con.execute("CREATE TABLE CommAnalyzerBandwidth (hccl_op_name TEXT, group_name TEXT, "
                "transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth "
                "NUMERIC, large_packet_ratio NUMERIC, package_size NUMERIC, count NUMERIC, "
                "total_duration NUMERIC, step TEXT, type TEXT)")
    for step, kinds in comm.items():
        for kind, ops in kinds.items():
            for key, e in ops.items():
                op, group = key.split("@")
                t = e["Communication Time Info"]
                con.execute("INSERT INTO CommAnalyzerTime VALUES (?,?,?,?,?,?,?,?,?,?)",
                            (op, group, t["Start Timestamp(us)"], t["Elapse Time(ms)"],
                             t["Transit Time(ms)"], t["Wait Time(ms)"], 0, 0, step, kind))
                b = e["Communication Bandwidth Info"]["HCCS"]
                con.execute("INSERT INTO CommAnalyzerBandwidth VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                            (op, group, "HCCS", b["Transit Size(MB)"], b["Transit Time(ms)"],
                             b["Bandwidth(GB/s)"], 0, b["Transit Size(MB)"], 1,
                             b["Transit Time(ms)"], step, kind))
    con.commit()
    con.close()


def metadata(rank):
    groups = {}
    for name, tag in [("dp", DP_GROUP[rank]), ("pp", PP_GROUP[rank])]:
        groups[GROUP_ID[tag]] = {
            "group_name": name, "group_rank": MEMBERS[tag].index(rank),
            "global_ranks": MEMBERS[tag]}
    groups[GROUP_ID["world"]] = {
        "group_name": "default_group", "group_rank": rank, "global_ranks": [0, 1, 2, 3]}
    return {
        "distributed_args": {
            "tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2,
            "data_parallel_size": 2, "context_parallel_size": 1,
            "expert_model_parallel_size": 1, "sequence_parallel": False,
            "rank": rank, "world_size": 4},
        "parallel_group_info": groups,
    }


def write_rank(timeline, rank):
    root = os.path.join(OUT, f"node0_{1000 + rank}_20250109000000000_ascend_pt")
    out = os.path.join(root, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out)
    names = op_names(timeline, rank)
    info = {"config": {"experimental_config": {"_profiler_level": "Level1",
                                               "_export_type": "text"}},
            "rank_id": rank}
    with open(os.path.join(root, f"profiler_info_{rank}.json"), "w") as f:
        json.dump(info, f, indent=1)
    with open(os.path.join(root, "profiler_metadata.json"), "w") as f:
        json.dump(metadata(rank), f, indent=1)
    rows = step_rows(timeline, rank)
    write_csv(os.path.join(out, "step_trace_time.csv"), rows)
    comm = comm_entries(timeline, rank, names)
    with open(os.path.join(out, "communication.json"), "w") as f:
        json.dump(comm, f, indent=1)
    if rank in (0, 2):
        with open(os.path.join(out, "trace_view.json"), "w") as f:
            f.write("[\n" + ",\n".join(json.dumps(e) for e in trace_view(timeline, rank, names))
                    + "\n]\n")
    if rank == 1:
        write_db(os.path.join(out, "analysis.db"), rows, comm)


def write_multidev():
    """Four devices of one process in one analysis.db, WAL mode, NULL step."""
    d = "testdata/ascend/multidev/PROF_000001_20250109000000000_ABCDEF/mindstudio_profiler_output"
    shutil.rmtree("testdata/ascend/multidev", ignore_errors=True)
    os.makedirs(d)
    con = sqlite3.connect(os.path.join(d, "analysis.db"))
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC, "
                "communication_not_overlapped NUMERIC, overlapped NUMERIC, communication "
                "NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, "
                "communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)")
    # Device 2 computes 30% more; the others the same, each step 100 ms.
    for dev, comp in [(0, 60000.0), (1, 60500.0), (2, 78000.0), (3, 59800.0)]:
        comm = 20000.0
        free = 100000.0 - comp - comm if dev != 2 else 2000.0
        con.execute("INSERT INTO StepTraceTime VALUES (?,NULL,?,?,?,?,?,?,?,?,?)",
                    (dev, comp, comm, 5000.0, comm + 5000.0, free, comp + comm + free, 0, comm, 0))
    con.commit()
    con.close()


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    timeline = run()
    for r in range(4):
        write_rank(timeline, r)
    write_multidev()


if __name__ == "__main__":
    main()
