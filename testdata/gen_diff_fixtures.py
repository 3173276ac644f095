#!/usr/bin/env python3
"""Writes testdata/diff/renamed/{before,after}/rank-0.json: one rank, two steps of the same
model where the GEMM kernel under aten::linear was renamed (a library upgrade: Cijk_* on the
old one, sm90_xmma_* on the new) and got faster, and the new run adds an aten::dropout.

Hand-computed answers (tests/faces/diff.rs):
- kernel `Cijk_Ailk_Bljk_HHS_BH` pairs with `sm90_xmma_gemm_bf16` through aten::linear:
  2 -> 2 calls, 200 us -> 160 us (-40 us);
- aten::linear matched by name and shapes, device time 200 -> 160 us;
- aten::dropout only in the second run: 2 calls, 10 us;
- relu_kernel unchanged: 2 -> 2, 20 us.
"""
import json, os

def trace(gemm, gemm_us, dropout):
    ev = [
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": 100, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
    ]
    corr = [1000]
    ext = [1]

    def op(name, ts, dur, kernel, kdur, dims):
        ext[0] += 1
        corr[0] += 1
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": 100, "ts": ts, "dur": dur,
                   "args": {"External id": ext[0], "Input Dims": dims, "Input type": ["c10::BFloat16"]}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
                   "ts": ts + 2, "dur": 4, "args": {"External id": ext[0], "correlation": corr[0]}})
        ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": ts + 10, "dur": kdur,
                   "args": {"External id": ext[0], "correlation": corr[0], "device": 0, "stream": 7}})

    for k, t0 in enumerate([1000, 2000]):
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k + 1}", "pid": 100, "tid": 100,
                   "ts": t0, "dur": 900, "args": {}})
        op("aten::linear", t0 + 10, 20, gemm, gemm_us, [[64, 128], [128, 128]])
        op("aten::relu", t0 + 40, 10, "relu_kernel", 10, [[64, 128]])
        if dropout:
            op("aten::dropout", t0 + 60, 10, "dropout_kernel", 5, [[64, 128]])
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
        "traceEvents": ev,
    }

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diff", "renamed")
for side, args in [("before", ("Cijk_Ailk_Bljk_HHS_BH", 100, False)), ("after", ("sm90_xmma_gemm_bf16", 80, True))]:
    os.makedirs(os.path.join(here, side), exist_ok=True)
    with open(os.path.join(here, side, "rank-0.json"), "w") as f:
        json.dump(trace(*args), f, indent=1)
