#!/usr/bin/env python3
"""SGEMM GFLOP/s through PyTorch (cuBLAS on a CUDA GPU, its CPU BLAS otherwise) at the shapes of an
`anycl bench gemm --json` run, printed beside anycl's device figures from that run: the peer
comparison of tools/gpu-check.sh. TF32 is off (torch.backends.cuda.matmul.allow_tf32 = False), so
both sides compute in FP32. Each figure is the median of --repeats timings of --calls back-to-back
products (CUDA events on a GPU), after a warm-up; op follows anycl's convention (TN: A is stored
k x m and read transposed). Rows "as trained" (anycl's own operand layouts) are timed as the plain
product of the same shape; the model's total counts anycl's step as it trains.
Usage: tools/pytorch_gemm.py ANYCL_BENCH_GEMM.json [--device cuda] [--repeats 7] [--calls 50]"""
import argparse
import json
import statistics
import time

import torch


def seconds_per_call(fn, device, calls, repeats):
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        if device.startswith("cuda"):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / calls)
        else:
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)


def product(op, m, n, k, device):
    a = torch.randn((k, m) if op[0] == "T" else (m, k), device=device)
    b = torch.randn((n, k) if op[1] == "T" else (k, n), device=device)
    a_op = a.t() if op[0] == "T" else a
    b_op = b.t() if op[1] == "T" else b
    c = torch.empty((m, n), device=device)
    return lambda: torch.matmul(a_op, b_op, out=c)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bench_json", help="output of `anycl bench gemm --json`")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--calls", type=int, default=50)
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with open(a.bench_json) as f:
        bench = json.load(f)
    name = torch.cuda.get_device_name() if a.device.startswith("cuda") else "cpu"
    print(f"PyTorch {torch.__version__} on {name} (TF32 off) beside anycl on {bench.get('device', '?')}")
    print(f"{'shape':<18}{'op':<10}{'m':>6}{'n':>6}{'k':>6}{'anycl GFLOP/s':>15}{'PyTorch GFLOP/s':>17}"
          f"{'anycl/PyTorch':>15}")
    rows = bench.get("gemm", [])
    plain_op = {row["shape"]: row["op"] for row in rows if row["op"] in ("NN", "NT", "TN", "TT")}
    as_trained = {row["shape"][:-len(" as trained")]: row for row in rows if row["shape"].endswith(" as trained")}
    anycl_total = torch_total = 0.0
    for row in rows:
        trained = row["shape"].endswith(" as trained")
        op = plain_op.get(row["shape"][:-len(" as trained")] if trained else row["shape"])
        if op is None:
            continue
        m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
        flops = 2.0 * m * n * k
        s = seconds_per_call(product(op, m, n, k, a.device), a.device, a.calls, a.repeats)
        torch_gflops = flops / s / 1e9
        anycl_gflops = float(row["device GFLOP/s"])
        if "³" not in row["shape"] and not trained:
            counted = as_trained.get(row["shape"], row)  # anycl's step runs the "as trained" layout
            anycl_total += flops / float(counted["device GFLOP/s"]) / 1e9
            torch_total += s
        print(f"{row['shape']:<18}{row['op']:<10}{m:>6}{n:>6}{k:>6}{anycl_gflops:>15.1f}{torch_gflops:>17.1f}"
              f"{anycl_gflops / torch_gflops:>15.2f}")
    if torch_total:
        print(f"the model's GEMMs, once each (anycl as trained): anycl {anycl_total * 1e3:.3f} ms, PyTorch "
              f"{torch_total * 1e3:.3f} ms, anycl time / PyTorch time = {anycl_total / torch_total:.2f}")


if __name__ == "__main__":
    main()
