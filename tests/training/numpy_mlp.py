#!/usr/bin/env python3
"""Recomputes the loss trajectory of the digits MLP in NumPy (float64) and
compares it with the one lmggml's ggml-opt produced.

Usage: numpy_mlp.py WORK_DIR DIGITS_U8

WORK_DIR (written by tests/training/numpy_trajectory_test.cpp) holds meta.txt
(sizes and AdamW values), the initial parameters w1/b1/w2/b2.f32 in ggml's
layout (ne0 fastest: w1 is [hidden][in] row major), order.i32 (the digits
records, batch after batch) and losses.f64 (ggml's loss before each step).

The model: x = pixels / 16, h = relu(W1 x + b1), z = W2 h + b2, loss = mean
over the batch of -sum_i y_i log softmax(z)_i with one-hot y. Gradients by
hand; AdamW as ggml's OPT_STEP_ADAMW at step t = 1, 2, ...:
  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
  w = w (1 - alpha wd) - alpha (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)

Exit 0 when every step agrees within 1e-4 relative and the check is shown to
be sensitive (a 1 % larger learning rate, no weight decay, or no bias
correction each move the trajectory by more than ten times the tolerance);
1 otherwise; 77 when NumPy is missing.
"""
import os
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_mlp.py: NumPy is not installed, skipped")
    sys.exit(77)

TOL = 1e-4


def load(work, digits_path):
    meta = {}
    with open(os.path.join(work, "meta.txt")) as f:
        for line in f:
            k, v = line.split()
            meta[k] = float(v)
    n_in, n_hid, n_cls = int(meta["in"]), int(meta["hidden"]), int(meta["classes"])

    def arr(name, shape):
        return np.fromfile(os.path.join(work, name + ".f32"), dtype=np.float32).astype(np.float64).reshape(shape)

    params = {"w1": arr("w1", (n_hid, n_in)), "b1": arr("b1", (n_hid,)),
              "w2": arr("w2", (n_cls, n_hid)), "b2": arr("b2", (n_cls,))}
    order = np.fromfile(os.path.join(work, "order.i32"), dtype=np.int32)
    losses = np.fromfile(os.path.join(work, "losses.f64"), dtype=np.float64)
    rec = np.fromfile(digits_path, dtype=np.uint8).reshape(-1, n_in + 1)
    x = rec[:, :n_in].astype(np.float64) / 16.0
    y = np.eye(n_cls)[rec[:, n_in]]
    return meta, params, x[order], y[order], losses


def loss_and_grads(p, x, y):
    a = x @ p["w1"].T + p["b1"]
    h = np.maximum(a, 0.0)
    z = h @ p["w2"].T + p["b2"]
    zs = z - z.max(axis=1, keepdims=True)
    logp = zs - np.log(np.exp(zs).sum(axis=1, keepdims=True))
    n = x.shape[0]
    loss = -(y * logp).sum() / n
    dz = (np.exp(logp) - y) / n
    dh = dz @ p["w2"]
    da = dh * (a > 0.0)  # ReLU's derivative is 0 at 0, as ggml's step()
    return loss, {"w2": dz.T @ h, "b2": dz.sum(axis=0), "w1": da.T @ x, "b1": da.sum(axis=0)}


def trajectory(meta, params, x, y, alpha_scale=1.0, wd=None, bias_correction=True):
    p = {k: v.copy() for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(w) for k, w in p.items()}
    alpha, b1, b2, eps = meta["alpha"] * alpha_scale, meta["beta1"], meta["beta2"], meta["eps"]
    wd = meta["wd"] if wd is None else wd
    batch, out = int(meta["batch"]), []
    for t in range(1, int(meta["steps"]) + 1):
        sl = slice((t - 1) * batch, t * batch)
        loss, g = loss_and_grads(p, x[sl], y[sl])
        out.append(loss)
        c1 = 1.0 / (1.0 - b1 ** t) if bias_correction else 1.0
        c2 = 1.0 / (1.0 - b2 ** t) if bias_correction else 1.0
        for k in p:
            m[k] = b1 * m[k] + (1.0 - b1) * g[k]
            v[k] = b2 * v[k] + (1.0 - b2) * g[k] ** 2
            p[k] = p[k] * (1.0 - alpha * wd) - alpha * (m[k] * c1) / (np.sqrt(v[k] * c2) + eps)
    return np.array(out)


def rel_dev(a, b):
    return np.abs(a - b) / np.abs(b)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    meta, params, x, y, ggml = load(sys.argv[1], sys.argv[2])
    ref = trajectory(meta, params, x, y)
    if ggml.shape != ref.shape:
        print(f"lmggml wrote {ggml.size} losses, expected {ref.size}")
        return 1
    dev = rel_dev(ggml, ref)
    print("| step | lmggml loss | NumPy loss | relative deviation |\n|---|---|---|---|")
    for i, (a, b, d) in enumerate(zip(ggml, ref, dev)):
        print(f"| {i + 1} | {a:.8f} | {b:.8f} | {d:.2e} |")
    print(f"max relative deviation {dev.max():.2e} (tolerance {TOL:g})")
    ok = bool(dev.max() <= TOL)
    # the comparison must be able to tell a slightly different optimizer apart
    for name, kw in [("learning rate x1.01", {"alpha_scale": 1.01}), ("no weight decay", {"wd": 0.0}),
                     ("no bias correction", {"bias_correction": False})]:
        d = rel_dev(ggml, trajectory(meta, params, x, y, **kw)).max()
        print(f"sensitivity: NumPy with {name} deviates by {d:.2e}")
        if d <= 10 * TOL:
            print(f"  too close: the check could not tell '{name}' apart")
            ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
