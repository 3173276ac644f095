#!/usr/bin/env python3
"""Per-file table of a cargo-mutants run (scripts/mutants.sh): caught, missed, timeout,
unviable, and the share caught of the viable ones. Reads target/mutants/*/mutants.out/
outcomes.json (or the folders given) and prints markdown for docs/testing.md. After an
`ITERATE=1` run, the mutants an earlier run caught (or found unviable: cargo-mutants keeps
them in one list, previously_caught.txt) are counted as `earlier`, the rest as re-tested.

    python3 scripts/mutants-table.py [target/mutants/steps ...]
"""
import glob
import json
import sys
from collections import defaultdict

KINDS = {"CaughtMutant": "caught", "MissedMutant": "missed", "Timeout": "timeout",
         "Unviable": "unviable"}

dirs = sys.argv[1:] or sorted(glob.glob("target/mutants/*"))
rows = defaultdict(lambda: defaultdict(int))
for d in dirs:
    try:
        outcomes = json.load(open(f"{d}/mutants.out/outcomes.json"))["outcomes"]
    except FileNotFoundError:
        continue
    for o in outcomes:
        m = o["scenario"]
        if not isinstance(m, dict) or "Mutant" not in m:
            continue  # the baseline
        rows[m["Mutant"]["file"]][KINDS.get(o["summary"], o["summary"])] += 1
    try:
        for line in open(f"{d}/mutants.out/previously_caught.txt"):
            if line.strip():
                rows[line.split(":", 1)[0]]["earlier"] += 1
    except FileNotFoundError:
        pass

print("| file | caught | missed | timeout | unviable | earlier run: caught or unviable | caught of viable |")
print("|---|---:|---:|---:|---:|---:|---:|")
total = defaultdict(int)
for f in sorted(rows):
    r = rows[f]
    for k in list(KINDS.values()) + ["earlier"]:
        total[k] += r[k]


def line(name, r):
    # Earlier-run entries count as caught (an unviable one among them makes this a little
    # generous; the run's log says which).
    caught = r["caught"] + r["timeout"] + r["earlier"]
    viable = caught + r["missed"]
    share = f"{100 * caught / viable:.0f}%" if viable else "-"
    print(f"| {name} | {r['caught']} | {r['missed']} | {r['timeout']} | {r['unviable']} | "
          f"{r['earlier']} | {share} |")


for f in sorted(rows):
    line(f"`{f}`", rows[f])
line("**all**", total)
