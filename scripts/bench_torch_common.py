"""Options and timing shared by the PyTorch side of the side-by-side
benchmarks (scripts/bench_torch_*.py): the device, threads, the precision
(FP32, TF32 products, or bf16 autocast) and the two result lines every
script prints:

  pytorch ms/step X        the median step (the line bench_threads.sh compares)
  pytorch tokens/s N (...) tokens over the mean step, with device and precision

Precision, on a CUDA device:
  --tf32 off (default)  float32 products in full FP32
  --tf32 on             float32 products on the TF32 tensor cores, as
                        compbench's GPU products (cuBLAS or its own kernel)
  --autocast bf16       forward passes under torch.autocast(bfloat16):
                        mixed precision, weights and optimizer in float32
On the CPU, --tf32 changes nothing; --autocast bf16 runs CPU autocast."""
import contextlib
import statistics
import time

import torch


def add_args(ap, threads=2):
    ap.add_argument("--device", default="cpu", help="torch device: cpu (default), cuda, cuda:N")
    ap.add_argument("--threads", type=int, default=threads, help="CPU threads (torch.set_num_threads)")
    ap.add_argument("--tf32", choices=("off", "on"), default="off",
                    help="CUDA: let float32 products use TF32 tensor cores (matmul and cuDNN), as compbench's GPU path does")
    ap.add_argument("--autocast", choices=("none", "bf16"), default="none",
                    help="bf16: forward passes under torch.autocast with bfloat16 (mixed precision)")


class Bench:
    """The device and precision of a parsed command line."""

    def __init__(self, a):
        torch.set_num_threads(a.threads)
        self.device = torch.device(a.device)
        cuda = self.device.type == "cuda"
        if cuda:
            torch.backends.cuda.matmul.allow_tf32 = a.tf32 == "on"
            torch.backends.cudnn.allow_tf32 = a.tf32 == "on"
        self.bf16 = a.autocast == "bf16"
        if self.bf16:
            self.precision = "bf16 autocast"
        elif cuda and a.tf32 == "on":
            self.precision = "tf32"
        else:
            self.precision = "fp32"
        self.name = a.device

    def autocast(self):
        """The context forward passes run in."""
        if self.bf16:
            return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def sync(self):
        """Waits for the device: CUDA kernels run asynchronously."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def time(self, step, n, warmup=1):
        """Runs step warmup times, then n times, each to completion; returns
        the n durations in seconds."""
        for _ in range(warmup):
            step()
        self.sync()
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            step()
            self.sync()
            times.append(time.perf_counter() - t0)
        return times

    def report(self, times, tokens, what):
        """Prints the two result lines: tokens is per step, what names a step."""
        mean = statistics.mean(times)
        print(f"pytorch ms/step {1000 * statistics.median(times):.3f}")
        print(f"pytorch tokens/s {tokens / mean:.1f} (mean {1000 * mean:.3f} ms per {what} over {len(times)}, "
              f"{tokens} tokens each, device {self.name}, {self.precision})")
