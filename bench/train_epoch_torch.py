#!/usr/bin/env python3
"""PyTorch twin of bench_train_epoch (bench/train_epoch_bench.cpp): the same
model, data, batch size and optimizer on the CPU, the same command line and
output, so that bench/compare-pytorch-training can alternate the two.

Usage: train_epoch_torch.py DIGITS_U8 mlp|cnn THREADS BATCH EPOCHS

mlp: 64 -> Linear 128 -> ReLU -> Linear 10. cnn: 8x8x1 -> Conv2d 3x3 pad 1
(16 channels, bias) -> ReLU -> MaxPool 2x2 -> Linear 256 -> 10. Both:
cross entropy, AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0:
ggml-opt's defaults), the whole batches of the data reshuffled every epoch,
loss and matches read back every batch as ggml-opt's results do. One untimed
warm-up epoch, then one line "epoch_s SECONDS loss L accuracy A" per epoch.
"""
import sys
import time

import numpy as np
import torch
from torch import nn


def model(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    if kind == "cnn":
        return nn.Sequential(nn.Unflatten(1, (1, 8, 8)), nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 10))
    raise SystemExit(f"unknown model '{kind}' (mlp or cnn)")


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    path, kind = sys.argv[1], sys.argv[2]
    threads, batch, epochs = (int(a) for a in sys.argv[3:6])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    rec = np.fromfile(path, dtype=np.uint8).reshape(-1, 65)
    ndata = len(rec) // batch * batch  # whole batches, as ggml-opt
    x = torch.from_numpy(rec[:ndata, :64].astype(np.float32) / 16.0)
    y = torch.from_numpy(rec[:ndata, 64].astype(np.int64))
    net = model(kind)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    loss_fn = nn.CrossEntropyLoss()
    for e in range(epochs + 1):  # epoch 0 warms up
        t0 = time.perf_counter()
        perm = torch.randperm(ndata)
        total, correct = 0.0, 0
        for i in range(0, ndata, batch):
            idx = perm[i:i + batch]
            xb, yb = x[idx], y[idx]
            out = net(xb)
            loss = loss_fn(out, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item()
            correct += int((out.argmax(1) == yb).sum())
        s = time.perf_counter() - t0
        if e > 0:
            print(f"epoch_s {s:.6f} loss {total / (ndata // batch):.4f} accuracy {correct / ndata:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
