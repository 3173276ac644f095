#!/usr/bin/env python3
"""Writes the seed corpus of one fuzz target (docs/testing.md, "Fuzzing") into a folder:
the project's fixtures (testdata/) and, where ../shared is beside the checkout, small real
inputs from ../shared/traces, each framed as the target reads it (a selector byte, ranks or
sources joined by 0xff). Seeds are named seed-*; the fuzzer adds its own files beside them.

usage: fuzz-seeds.py TARGET OUT_DIR
"""
import glob, gzip, hashlib, os, sqlite3, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TD = os.path.join(ROOT, "testdata")
SHARED = os.environ.get("STEPSCOPE_SHARED", os.path.join(ROOT, "..", "shared"))
TRACES = os.path.join(SHARED, "traces")
SEP = b"\xff"
MAX = 256 << 10  # a seed larger than this only slows the fuzzer


def read(p, limit=MAX):
    with open(p, "rb") as f:
        return f.read(limit)


def small(paths, limit=MAX):
    return [p for p in paths if os.path.isfile(p) and os.path.getsize(p) <= limit]


def single_traces():
    good = small(glob.glob(os.path.join(TD, "*.json")))
    shared = small(glob.glob(os.path.join(TRACES, "**", "*.json"), recursive=True), 128 << 10)
    return [read(p) for p in sorted(good) + sorted(shared)[:40]]


def jobs():
    out = []
    for d in sorted(glob.glob(os.path.join(TD, "*"))):
        ranks = sorted(glob.glob(os.path.join(d, "rank*.json")))
        if os.path.isdir(d) and ranks:
            out.append(SEP.join(read(p) for p in ranks))
    return out + single_traces()[:10]


def ascend_files(pattern):
    return small(
        glob.glob(os.path.join(TD, "ascend", "**", pattern), recursive=True)
        + glob.glob(os.path.join(TRACES, "ascend", "**", pattern), recursive=True)
    )[:30]


def csvs():
    picks = {"kernel_details.csv": 0, "step_trace_time.csv": 1, "op_statistic.csv": 2}
    return [bytes([k]) + read(p) for name, k in picks.items() for p in ascend_files(name)]


def jsons():
    picks = [("communication.json", [0, 1]), ("communication_matrix.json", [2]),
             ("profiler_info_*.json", [3]), ("profiler_metadata.json", [3])]
    out = [bytes([k]) + read(p) for name, ks in picks for p in ascend_files(name) for k in ks]
    # Summary-only ranks: a step summary, a NUL, its communication.json (pick 4).
    for d in sorted(glob.glob(os.path.join(TD, "ascend", "pp4", "*", "ASCEND_PROFILER_OUTPUT"))):
        csv, comm = os.path.join(d, "step_trace_time.csv"), os.path.join(d, "communication.json")
        out.append(bytes([4]) + read(csv) + b"\0" + read(comm))
    return out


def dbs():
    out = []
    for sql in sorted(glob.glob(os.path.join(TD, "ascend", "tiny-db", "*.sql"))):
        with tempfile.TemporaryDirectory() as t:
            path = os.path.join(t, "x.db")
            con = sqlite3.connect(path)
            con.executescript(open(sql).read())
            con.commit()
            con.close()
            out.append(read(path))
    return out + [read(p, 1 << 20) for p in ascend_files("*.db")[:4]]


def logs():
    files = sorted(glob.glob(os.path.join(TD, "watch", "*")))
    files += sorted(glob.glob(os.path.join(TRACES, "logs", "**", "*.*"), recursive=True))
    files = [f for f in files if not f.endswith(".md") and os.path.isfile(f)]
    heads = [read(f, 16 << 10) for f in files]
    # Two framing bytes: chunk size, and (odd) one recogniser only.
    out = [bytes([7, 0]) + h for h in heads]
    out += [bytes([0, 2 * k + 1]) + h for k, h in enumerate(heads[:12])]
    out.append(bytes([3, 0]) + SEP.join(heads[:4]))
    return out


SEEDS = {
    "trace": single_traces,
    "trace_serde": single_traces,
    "gzip": lambda: [gzip.compress(t) for t in single_traces()],
    # The first byte is the read size; half the seeds gzip, half plain.
    "stream": lambda: [bytes([(7 * i) % 256]) + (gzip.compress(t) if i % 2 else t)
                       for i, t in enumerate(single_traces())],
    "ascend_csv": csvs,
    "ascend_json": jsons,
    "ascend_db": dbs,
    "logs": logs,
    "report": jobs,
    # Each fixture job's dumps, ranks joined by 0xff (JSON ones only: a pickle may hold 0xff).
    "flight": lambda: [SEP.join(read(p) for p in sorted(glob.glob(os.path.join(TD, "flight", j, "*"))))
                       for j in ("desync3",)]
    + [read(p) for p in sorted(glob.glob(os.path.join(TD, "flight", "*", "nccl_trace_rank_*")))],
    "snapshot": jobs,
}

if __name__ == "__main__":
    target, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for data in SEEDS[target]():
        name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
