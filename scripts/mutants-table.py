#!/usr/bin/env python3
"""Per-file table of a cargo-mutants run (scripts/mutants.sh): caught, missed, timeout,
unviable, and the share caught of the viable ones. Reads target/mutants/*/mutants.out/
outcomes.json (or the folders given) and prints markdown for docs/testing.md.

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

print("| file | caught | missed | timeout | unviable | caught of viable |")
print("|---|---:|---:|---:|---:|---:|")
total = defaultdict(int)
for f in sorted(rows):
    r = rows[f]
    for k in KINDS.values():
        total[k] += r[k]
    viable = r["caught"] + r["missed"] + r["timeout"]
    share = f"{100 * (r['caught'] + r['timeout']) / viable:.0f}%" if viable else "-"
    print(f"| `{f}` | {r['caught']} | {r['missed']} | {r['timeout']} | {r['unviable']} | {share} |")
viable = total["caught"] + total["missed"] + total["timeout"]
if viable:
    share = f"{100 * (total['caught'] + total['timeout']) / viable:.0f}%"
    print(f"| **all** | {total['caught']} | {total['missed']} | {total['timeout']} | "
          f"{total['unviable']} | {share} |")
