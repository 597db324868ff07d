#!/usr/bin/env python3
"""Cross-checks lmggml's GGUF reader and writer with the `gguf` Python package.

    gguf_cross.py write PATH    write PATH with the package: every value type,
                                arrays (strings included) and tensors F32, F16,
                                BF16, I32, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1
    gguf_cross.py nested PATH   write PATH with an array of arrays (lmggml,
                                like ggml, refuses those)
    gguf_cross.py check PATH    read PATH (written by the C++ test) with the
                                package and verify every value; exit 1 on any
                                mismatch

The values are written out literally here and in the C++ test
(tests/gguf/gguf_python_test.cpp); neither side derives them from the other.
"""

import sys

import numpy as np
import gguf
from gguf import GGUFValueType as VT, GGMLQuantizationType as QT


def source_values(n):
    # exactly representable in f16, bf16 and f32: k/16 for |k| <= 50
    return np.array([((i * 37) % 101 - 50) / 16.0 for i in range(n)], dtype=np.float32)


def quant_source():
    # (2, 64) rows for the block formats; exact in f32
    return np.array([((i * 29) % 97 - 48) / 8.0 for i in range(128)], dtype=np.float32).reshape(2, 64)


SCALARS = [
    ("py.u8", VT.UINT8, 250),
    ("py.i8", VT.INT8, -120),
    ("py.u16", VT.UINT16, 65000),
    ("py.i16", VT.INT16, -32000),
    ("py.u32", VT.UINT32, 4000000001),
    ("py.i32", VT.INT32, -2000000001),
    ("py.f32", VT.FLOAT32, 1.5),
    ("py.u64", VT.UINT64, 2**64 - 2),
    ("py.i64", VT.INT64, -(2**63) + 1),
    ("py.f64", VT.FLOAT64, -1.25e-300),
    ("py.bool", VT.BOOL, True),
    ("py.str", VT.STRING, "\u00fcn\u00efc\u00f6d\u00e9 \u2581x"),
]

ARRAYS = [
    ("py.arr.u8", VT.UINT8, [0, 128, 255]),
    ("py.arr.i8", VT.INT8, [-128, 0, 127]),
    ("py.arr.u16", VT.UINT16, [1, 2, 65535]),
    ("py.arr.i16", VT.INT16, [-32768, 5, 32767]),
    ("py.arr.u32", VT.UINT32, [0, 7, 4294967295]),
    ("py.arr.i32", VT.INT32, [-2147483648, -1, 2147483647]),
    ("py.arr.f32", VT.FLOAT32, [0.25, -0.5, 1024.0]),
    ("py.arr.u64", VT.UINT64, [0, 1, 2**64 - 1]),
    ("py.arr.i64", VT.INT64, [-(2**63), 0, 2**63 - 1]),
    ("py.arr.f64", VT.FLOAT64, [1e300, -2.5, 0.0]),
    ("py.arr.bool", VT.BOOL, [True, False, True]),
    ("py.arr.str", VT.STRING, ["a", "", "\u2581b\u00e9"]),
]


def cmd_write(path):
    w = gguf.GGUFWriter(path, "crosscheck")
    w.add_custom_alignment(64)
    for key, vt, val in SCALARS:
        w.add_key_value(key, val, vt)
    for key, vt, val in ARRAYS:
        w.add_key_value(key, val, VT.ARRAY, sub_type=vt)
    x = source_values(12)
    w.add_tensor("f32", x.reshape(3, 4))                       # ne = (4, 3)
    w.add_tensor("f16", source_values(8).astype(np.float16))   # ne = (8)
    w.add_tensor("bf16", gguf.quants.quantize(source_values(6).reshape(2, 3), QT.BF16), raw_dtype=QT.BF16)
    w.add_tensor("i32", np.arange(-3, 3, dtype=np.int32))
    q = quant_source()
    for name, qt in (("q8_0", QT.Q8_0), ("q4_0", QT.Q4_0), ("q4_1", QT.Q4_1), ("q5_0", QT.Q5_0), ("q5_1", QT.Q5_1)):
        w.add_tensor(name, gguf.quants.quantize(q, qt), raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def cmd_nested(path):
    w = gguf.GGUFWriter(path, "crosscheck")
    w.add_key_value("py.nested", [[1, 2], [3]], VT.ARRAY, sub_type=VT.ARRAY)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# What the C++ test writes (gguf_python_test.cpp, LmggmlFileReadsInPython).
EXPECT_SCALARS = {
    "lm.u8": (VT.UINT8, 7),
    "lm.i8": (VT.INT8, -7),
    "lm.u16": (VT.UINT16, 40000),
    "lm.i16": (VT.INT16, -20000),
    "lm.u32": (VT.UINT32, 3000000000),
    "lm.i32": (VT.INT32, -1000000000),
    "lm.f32": (VT.FLOAT32, -0.75),
    "lm.u64": (VT.UINT64, 2**63 + 11),
    "lm.i64": (VT.INT64, -(2**62) - 3),
    "lm.f64": (VT.FLOAT64, 6.02214076e23),
    "lm.bool": (VT.BOOL, False),
    "lm.str": (VT.STRING, "lmggml \u2192 gguf-py"),
}
EXPECT_ARRAYS = {
    "lm.arr.u8": (VT.UINT8, [9, 8]),
    "lm.arr.i16": (VT.INT16, [-300, 300]),
    "lm.arr.u32": (VT.UINT32, [1, 4294967295]),
    "lm.arr.i64": (VT.INT64, [-5, 5, 2**40]),
    "lm.arr.f32": (VT.FLOAT32, [0.125, -8.0]),
    "lm.arr.f64": (VT.FLOAT64, [0.1, 1e-10]),
    "lm.arr.bool": (VT.BOOL, [False, True]),
    "lm.arr.str": (VT.STRING, ["", "tok", "\u00e9\u00e8"]),
}


def cmd_check(path):
    errors = []
    r = gguf.GGUFReader(path)

    def field(key):
        f = r.get_field(key)
        if f is None:
            errors.append(f"missing key {key}")
        return f

    for key, (vt, want) in EXPECT_SCALARS.items():
        f = field(key)
        if f is None:
            continue
        if f.types != [vt]:
            errors.append(f"{key}: types {f.types}, expected [{vt}]")
        got = f.contents()
        if got != want:
            errors.append(f"{key}: {got!r} != {want!r}")
    for key, (vt, want) in EXPECT_ARRAYS.items():
        f = field(key)
        if f is None:
            continue
        if f.types != [VT.ARRAY, vt]:
            errors.append(f"{key}: types {f.types}, expected [ARRAY, {vt}]")
        got = f.contents()
        if vt == VT.FLOAT32:
            want = [float(np.float32(v)) for v in want]
        if got != want:
            errors.append(f"{key}: {got!r} != {want!r}")
    n_lm_keys = sum(1 for k in r.fields if k.startswith("lm."))
    if n_lm_keys != len(EXPECT_SCALARS) + len(EXPECT_ARRAYS):
        errors.append(f"{n_lm_keys} lm.* keys")

    tensors = {t.name: t for t in r.tensors}
    if sorted(tensors) != ["f16", "f32", "i8", "q8_0"]:
        errors.append(f"tensor names {sorted(tensors)}")
    else:
        def expect(name, qt, ne):
            t = tensors[name]
            if t.tensor_type != qt:
                errors.append(f"{name}: type {t.tensor_type!r}, expected {qt!r}")
            if [int(d) for d in t.shape] != ne:
                errors.append(f"{name}: ne {list(t.shape)}, expected {ne}")
            if t.data_offset % 32 != 0:
                errors.append(f"{name}: data offset {t.data_offset} not aligned")
            return t

        t = expect("f32", QT.F32, [5, 2])
        if not np.array_equal(np.asarray(t.data).reshape(-1), source_values(10)):
            errors.append("f32: data differs")
        t = expect("f16", QT.F16, [4])
        if not np.array_equal(np.asarray(t.data).reshape(-1).astype(np.float32), source_values(4)):
            errors.append("f16: data differs")
        t = expect("i8", QT.I8, [3, 1, 2])
        if np.asarray(t.data).reshape(-1).tolist() != [-3, -2, -1, 0, 1, 2]:
            errors.append(f"i8: data {np.asarray(t.data).reshape(-1).tolist()}")
        t = expect("q8_0", QT.Q8_0, [64, 2])
        raw = np.asarray(t.data).reshape(-1).view(np.uint8)
        deq = gguf.quants.dequantize(raw.reshape(2, 68), QT.Q8_0).reshape(-1)
        src = quant_source().reshape(-1)
        # Q8_0 keeps each value within half a step (scale = amax / 127)
        for b in range(4):
            blk = slice(32 * b, 32 * (b + 1))
            step = np.abs(src[blk]).max() / 127.0
            if np.abs(deq[blk] - src[blk]).max() > step * 0.5 + 1e-3:
                errors.append(f"q8_0: block {b} dequantizes too far from the source")

    if errors:
        print("MISMATCH\n" + "\n".join(errors))
        return 1
    print("OK")
    return 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "nested", "check"):
        print(__doc__)
        return 2
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "write":
        cmd_write(path)
        return 0
    if cmd == "nested":
        cmd_nested(path)
        return 0
    return cmd_check(path)


if __name__ == "__main__":
    sys.exit(main())
