#!/usr/bin/env python3
"""Records real PyTorch CPU (gloo) training runs in pairs for the what-if's accuracy test.

Each pair is the same model, seed, data and profiler schedule twice: once with an injected
problem, once clean. stepscope's prediction "fix it" on the faulty run is then held to the
clean run's measured step time (tests/analyses/whatif_pairs.rs, docs/metrics.md "Replay").

Problems:
  slow-rank      rank 1 does 1.6x the forward work (extra matmuls in its step): a straggler
  loader-stall   rank 1's data loader sleeps 40 ms per batch: the others wait in all-reduce
  small-buckets  DDP buckets of 16 KiB instead of 25 MiB: one all-reduce per parameter

usage: record_pairs.py OUT_DIR [--ranks 2] [--steps 4] [--problems slow-rank,...]

Writes OUT_DIR/<problem>/{faulty,clean}/<host>_<pid>.<ns>.pt.trace.json.gz (Kineto's own
file names, from tensorboard_trace_handler) and OUT_DIR/SOURCE.md. Needs torch (PyPI, CPU).
"""
import argparse
import os
import socket
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.utils.data import DataLoader, Dataset

PROBLEMS = ["slow-rank", "loader-stall", "small-buckets"]
WIDTH, DEPTH, BATCH = 256, 12, 256


class Batches(Dataset):
    """Synthetic regression batches, the same on every run (seeded by index)."""

    def __init__(self, n, stall_s):
        self.n, self.stall_s = n, stall_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.stall_s:
            time.sleep(self.stall_s)
        g = torch.Generator().manual_seed(i)
        return torch.randn(WIDTH, generator=g), torch.randn(WIDTH, generator=g)


def model():
    layers = []
    for _ in range(DEPTH):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


def worker(rank, world, problem, faulty, out, port, steps):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    net = model()
    bucket_mb = 0.016 if (faulty and problem == "small-buckets") else 25
    ddp = DDP(net, bucket_cap_mb=bucket_mb)
    slow = faulty and problem == "slow-rank" and rank == 1
    stall = 0.040 / BATCH if (faulty and problem == "loader-stall" and rank == 1) else 0
    loader = DataLoader(Batches(BATCH * (steps + 3), stall), batch_size=BATCH, num_workers=0)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    extra = [torch.randn(BATCH, WIDTH) for _ in range(2)]
    sched = schedule(wait=1, warmup=1, active=steps, repeat=1)
    handler = tensorboard_trace_handler(str(out), use_gzip=True)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, on_trace_ready=handler) as prof:
        for i, (x, y) in enumerate(loader):
            if i >= steps + 2:
                break
            if slow:
                # The straggler: more forward work on this rank only (0.6x the model's matmuls).
                w = net[0].weight.detach()
                for _ in range(int(DEPTH * 0.6) * 3):
                    extra[0] = torch.relu(extra[0] @ w) * 0.5
            loss = torch.nn.functional.mse_loss(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    a = ap.parse_args()
    root = Path(a.out)
    for problem in a.problems.split(","):
        for faulty in (True, False):
            out = root / problem / ("faulty" if faulty else "clean")
            out.mkdir(parents=True, exist_ok=True)
            mp.spawn(worker, args=(a.ranks, problem, faulty, out, free_port(), a.steps),
                     nprocs=a.ranks, join=True)
            print(f"recorded {out}", flush=True)
    (root / "SOURCE.md").write_text(
        f"# whatif-pairs: real paired PyTorch CPU (gloo) runs\n\n"
        f"- Made by `scripts/record_pairs.py {a.out} --ranks {a.ranks} --steps {a.steps}` with torch "
        f"{torch.__version__}, on `{socket.gethostname()}`. Nothing was edited by hand.\n"
        f"- Model: MLP of {DEPTH} Linear({WIDTH},{WIDTH})+ReLU layers, batch {BATCH}, SGD, DDP, "
        f"1 thread per rank. Profiler: CPU, schedule(wait=1, warmup=1, active={a.steps}).\n"
        f"- Pairs (faulty/clean, same seed and data): {a.problems}.\n")


if __name__ == "__main__":
    main()
