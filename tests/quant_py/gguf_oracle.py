#!/usr/bin/env python3
"""Numpy oracle for test_quant_py: quantizes and dequantizes with the `gguf`
Python package (gguf.quants), the reference that GGUF files in circulation
are written with.

    gguf_oracle.py --venv DIR --work DIR

DIR/--work holds, written by the C++ test:
    meta.txt           "<rows> <n_per_row>"
    input.f32          rows * n_per_row little-endian float32 values
    ours.<type>.bin    lmggml's bytes for each type name (q4_0, bf16, ...)
and receives:
    np.<type>.bin      gguf.quants.quantize(input) bytes, for types it can quantize
    npdeq.<type>.f32   gguf.quants.dequantize(ours) values, for types it can dequantize
    report.txt         one line per type: "<type> quant yes|no dequant yes|no"

The venv (python3 -m venv; pip install gguf numpy) is created on first use and
reused; a lock file serialises concurrent runs. Exit status: 0 done, 3 pip
could not install the packages (the caller skips), anything else an error.
"""
import argparse
import fcntl
import os
import subprocess
import sys

PIP_UNREACHABLE = 3


def ensure_venv(venv):
    python = os.path.join(venv, "bin", "python")
    os.makedirs(os.path.dirname(os.path.abspath(venv)), exist_ok=True)
    with open(os.path.abspath(venv) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(python):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        probe = subprocess.run([python, "-c", "import gguf.quants, numpy"], capture_output=True)
        if probe.returncode != 0:
            pip = subprocess.run(
                [python, "-m", "pip", "install", "--disable-pip-version-check", "-q", "gguf", "numpy"],
                capture_output=True, text=True, timeout=900)
            if pip.returncode != 0:
                tail = (pip.stdout + pip.stderr).strip().splitlines()[-3:]
                print("pip install gguf numpy failed: " + " | ".join(tail))
                sys.exit(PIP_UNREACHABLE)
    return python


def run_oracle(work):
    import numpy as np
    import gguf
    from gguf import quants
    from gguf.constants import GGMLQuantizationType

    with open(os.path.join(work, "meta.txt")) as f:
        rows, n_per_row = (int(v) for v in f.read().split())
    data = np.fromfile(os.path.join(work, "input.f32"), dtype="<f4").reshape(rows, n_per_row)

    # ggml spells K-quants "q4_K"; match the gguf enum names case-insensitively
    ours_files = {f.lower(): f for f in os.listdir(work) if f.startswith("ours.") and f.endswith(".bin")}
    lines = []
    for qtype in GGMLQuantizationType:
        found = ours_files.get(f"ours.{qtype.name.lower()}.bin")
        if found is None:
            continue
        name = found[len("ours."):-len(".bin")]
        ours_path = os.path.join(work, found)
        can_quant = can_dequant = False
        try:
            q = quants.quantize(data, qtype)
            np.ascontiguousarray(q).view(np.uint8).tofile(os.path.join(work, f"np.{name}.bin"))
            can_quant = True
        except NotImplementedError:
            pass
        ours = np.fromfile(ours_path, dtype=np.uint8)
        try:
            if qtype in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
                dtype = np.float32 if qtype == GGMLQuantizationType.F32 else np.float16
                deq = ours.view(dtype).astype(np.float32)
            else:
                deq = quants.dequantize(ours.reshape(rows, -1), qtype)
            np.ascontiguousarray(deq, dtype="<f4").tofile(os.path.join(work, f"npdeq.{name}.f32"))
            can_dequant = True
        except NotImplementedError:
            pass
        lines.append(f"{name} quant {'yes' if can_quant else 'no'} dequant {'yes' if can_dequant else 'no'}")
    with open(os.path.join(work, "report.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    version = getattr(gguf, "__version__", None)
    if version is None:
        try:
            from importlib.metadata import version as pkg_version
            version = pkg_version("gguf")
        except Exception:  # noqa: BLE001 - version is informational only
            version = "?"
    print(f"gguf {version}, numpy {np.__version__}: {len(lines)} types")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.inside:
        python = ensure_venv(args.venv)
        sys.stdout.flush()
        os.execv(python, [python, os.path.abspath(__file__), "--venv", args.venv, "--work", args.work, "--inside"])
    run_oracle(args.work)


if __name__ == "__main__":
    main()
