#!/usr/bin/env python3
"""anycl's reference models trained with PyTorch as its users run it (default threads and
settings), on the CPU for `tools/compare-pytorch.sh` or on a CUDA GPU (--device cuda, for
tools/gpu-check.sh): Keras' mnist_mlp (784-512-512-10, ReLU, dropout 0.2, RMSprop lr 0.001, rho
0.9, eps 1e-7) or mnist_cnn (conv 32 3x3, conv 64 3x3, max-pool 2, dropout 0.25, dense 128,
dropout 0.5, dense 10; Adam lr 0.001, eps 1e-7) or the BatchNorm CNN (`anycl train --model bncnn`,
Keras' block conv → BatchNorm → ReLU: conv 32 3x3 → BatchNorm → relu, conv 64 3x3 → BatchNorm →
relu → max-pool 2, conv 64 3x3 → BatchNorm → relu, global average pooling, dense 10; BatchNorm
momentum 0.9 in Keras' terms (PyTorch's default 0.1) and Keras' epsilon 1e-3; Adam as the CNN's),
batch 128.
PyTorch's own initialisers (anycl's are Keras' glorot_uniform), or with --init keras those. Prints
one JSON line per epoch: training seconds (the training steps only, as anycl's samples/s), samples/s,
the same plus the test evaluation, train loss/accuracy and test accuracy."""
import argparse
import gzip
import json
import os
import time

import numpy as np
import torch


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=os.environ.get("ANYCL_DATA", "/usr/share/datasets/fashion-mnist"))
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--threads", type=int, default=0, help="0: PyTorch's default")
    p.add_argument("--model", choices=["mlp", "cnn", "bncnn"], default="mlp")
    p.add_argument("--limit", type=int, default=0, help="train on the first N samples only")
    p.add_argument("--device", default="cpu", help="cpu, or cuda: the data set and model live on the GPU")
    p.add_argument("--init", choices=["torch", "keras"], default="torch",
                   help="PyTorch's own initialisers (default), or Keras' (anycl's): glorot_uniform, zero biases")
    p.add_argument("--seed", type=int, default=1, help="seed for the weights, dropout and shuffling (default 1)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x = torch.from_numpy(idx(f"{a.data}/train-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255)
    y = torch.from_numpy(idx(f"{a.data}/train-labels-idx1-ubyte.gz").astype(np.int64))
    xt = torch.from_numpy(idx(f"{a.data}/t10k-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255)
    yt = torch.from_numpy(idx(f"{a.data}/t10k-labels-idx1-ubyte.gz").astype(np.int64))
    if a.limit:
        x, y = x[:a.limit], y[:a.limit]
    x, y, xt, yt = x.to(a.device), y.to(a.device), xt.to(a.device), yt.to(a.device)
    if a.model == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                    torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                    torch.nn.Linear(512, 10))
        opt = torch.optim.RMSprop(model.parameters(), lr=0.001, alpha=0.9, eps=1e-7)
    elif a.model == "bncnn":
        x, xt = x.reshape(-1, 1, 28, 28), xt.reshape(-1, 1, 28, 28)
        nn = torch.nn

        def bn(c):
            return nn.BatchNorm2d(c, eps=1e-3, momentum=0.1)

        model = nn.Sequential(nn.Conv2d(1, 32, 3), bn(32), nn.ReLU(), nn.Conv2d(32, 64, 3), bn(64), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Conv2d(64, 64, 3), bn(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                              nn.Flatten(), nn.Linear(64, 10))
        opt = torch.optim.Adam(model.parameters(), lr=0.001, eps=1e-7)
    else:
        x, xt = x.reshape(-1, 1, 28, 28), xt.reshape(-1, 1, 28, 28)
        model = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.Conv2d(32, 64, 3),
                                    torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Dropout(0.25),
                                    torch.nn.Flatten(), torch.nn.Linear(9216, 128), torch.nn.ReLU(),
                                    torch.nn.Dropout(0.5), torch.nn.Linear(128, 10))
        opt = torch.optim.Adam(model.parameters(), lr=0.001, eps=1e-7)
    if a.init == "keras":  # the weights as Keras (and anycl) start them, so only the arithmetic differs
        for m in model.modules():
            if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)):
                torch.nn.init.xavier_uniform_(m.weight)
                torch.nn.init.zeros_(m.bias)
    model.to(a.device)
    loss_fn = torch.nn.CrossEntropyLoss()
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(),
                      "blas": "MKL" if torch.backends.mkl.is_available() else "other",
                      "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                      "MKL_ENABLE_INSTRUCTIONS": os.environ.get("MKL_ENABLE_INSTRUCTIONS", ""),
                      "device": torch.cuda.get_device_name() if a.device.startswith("cuda") else "cpu"}),
          flush=True)
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        model.train()
        order = torch.randperm(len(x), device=a.device)
        loss_sum, correct = 0.0, 0
        for first in range(0, len(x), 128):
            rows = order[first:first + 128]
            xb, yb = x[rows], y[rows]
            opt.zero_grad()
            out = model(xb)
            loss = loss_fn(out, yb)
            loss.backward()
            opt.step()
            loss_sum += loss.item() * len(rows)
            correct += (out.argmax(1) == yb).sum().item()
        train_s = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            # in chunks: a CNN's activations for all 10,000 test images at once take gigabytes
            acc = sum((model(xt[i:i + 1000]).argmax(1) == yt[i:i + 1000]).sum().item()
                      for i in range(0, len(xt), 1000)) / len(xt)
        print(json.dumps({"epoch": epoch, "train_seconds": round(train_s, 3),
                          "samples_per_second": round(len(x) / train_s, 1),
                          "seconds": round(time.perf_counter() - t0, 3), "train_loss": loss_sum / len(x),
                          "train_acc": correct / len(x), "test_acc": acc}), flush=True)


if __name__ == "__main__":
    main()
