#!/usr/bin/env python3
"""Records a real GPU pair for `stepscope diff` (issue 33): the same model and data, one
PyTorch profiler (Kineto) trace in fp32 and one under bf16 autocast — a precision change, so
the GEMM kernels are renamed between the runs (cuBLAS picks other kernels) and get faster.

    python3 scripts/record_gpu_pair.py OUT_DIR     # writes OUT_DIR/{fp32,bf16}/rank-0.json.gz

Model: 8 × (Linear(2048, 2048) + GELU), batch 512, SGD; profiler schedule wait=1, warmup=1,
active=4 with record_shapes. Needs one CUDA GPU."""
import gzip
import os
import shutil
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule


def run(out_dir: str, bf16: bool) -> None:
    torch.manual_seed(0)
    dev = "cuda"
    model = nn.Sequential(*[nn.Sequential(nn.Linear(2048, 2048), nn.GELU()) for _ in range(8)]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(512, 2048, device=dev)
    y = torch.randn(512, 2048, device=dev)
    os.makedirs(out_dir, exist_ok=True)
    raw = os.path.join(out_dir, "rank-0.json")

    def ready(p):
        p.export_chrome_trace(raw)

    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=4),
        on_trace_ready=ready,
        record_shapes=True,
    ) as p:
        for _ in range(6):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
                loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            p.step()
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)


if __name__ == "__main__":
    out = sys.argv[1]
    for name, bf16 in [("fp32", False), ("bf16", True)]:
        run(os.path.join(out, name), bf16)
    print(torch.__version__, torch.cuda.get_device_name(0))
