#!/usr/bin/env python3
"""Generates null_calls.inc for null_sweep_test.cpp from the public headers.

For every function declared LM_GGML_API / LM_GGML_BACKEND_API in include/*.h
and every pointer parameter it takes, one case calls the function with NULL
in that parameter and valid objects (from the test's Fixture) in all others.

    gen_null_calls.py <source dir>            writes tests/reliability/null_calls.inc
    gen_null_calls.py <source dir> --check    fails when the file is out of date
"""
import glob
import os
import re
import sys

# Declared in the headers for plugin authors, defined by plugins, not by the library.
NOT_IN_LIBRARY = {"lm_ggml_backend_init", "lm_ggml_backend_score"}
# Not swept, each for a reason:
SKIP = {
    # ends the process by design (the abort-handler death tests cover it)
    "lm_ggml_abort",
    # C++-linkage internals of ggml-impl.h for the gguf tools (not part of the
    # C ABI): the FILE * and std::vector & belong to a C++ caller, and the
    # GGUF reader/writer behind them is covered by tests/gguf and the fuzzer
    "lm_gguf_init_from_file_impl", "lm_gguf_write_to_buf",
}
# lm_ggml_*_t typedefs that are values, not handles or callbacks. Any other
# lm_ggml_*_t parameter must be in VALID, so that a new handle type cannot
# slip through as a scalar (and its NULL case go missing).
VALUE_TYPEDEFS = {"lm_ggml_fp16_t", "lm_ggml_bf16_t", "lm_ggml_bitset_t"}
# Declarations whose functions live in a plugin's static core and are swept
# only where the test links it (the macro in null_sweep_test.cpp drops them
# otherwise), by header.
GUARDED = {"ggml-rpc.h": "NULL_CASE_RPC"}

# A valid argument for each pointer type (Fixture members, see null_sweep_test.cpp).
VALID = {
    "struct lm_ggml_context *": "F.ctx",
    "const struct lm_ggml_context *": "F.ctx",
    "struct lm_ggml_tensor *": "F.t",
    "const struct lm_ggml_tensor *": "F.t",
    "struct lm_ggml_cgraph *": "F.graph",
    "const struct lm_ggml_cgraph *": "F.graph",
    "lm_ggml_backend_t": "F.backend",
    "lm_ggml_backend_t *": "F.backends",
    "lm_ggml_backend_buffer_t": "F.buffer",
    "lm_ggml_backend_buffer_t *": "F.buffers",
    "lm_ggml_backend_buffer_type_t": "F.buft",
    "lm_ggml_backend_buffer_type_t *": "F.bufts",
    "lm_ggml_backend_dev_t": "F.dev",
    "lm_ggml_backend_reg_t": "F.reg",
    "lm_ggml_backend_event_t": "F.event",
    "lm_ggml_backend_graph_plan_t": "F.plan",
    "lm_ggml_backend_sched_t": "F.sched",
    "lm_ggml_gallocr_t": "F.galloc",
    "lm_ggml_guid_t": "F.guid",
    "lm_ggml_threadpool_t": "F.threadpool",
    "struct lm_ggml_threadpool *": "F.threadpool",
    "struct lm_ggml_threadpool_params *": "&F.tpp",
    "const struct lm_ggml_threadpool_params *": "&F.tpp",
    "struct lm_ggml_cplan *": "&F.cplan",
    "struct lm_ggml_tallocr *": "&F.talloc",
    "struct lm_ggml_backend_dev_props *": "&F.props",
    "struct lm_gguf_context *": "F.gguf",
    "const struct lm_gguf_context *": "F.gguf",
    "const char *": '"x"',
    "const char **": "F.strs",
    "void *": "F.bytes",
    "const void *": "F.bytes",
    "float *": "F.floats",
    "const float *": "F.floats",
    "lm_ggml_fp16_t *": "F.halves",
    "const lm_ggml_fp16_t *": "F.halves",
    "lm_ggml_bf16_t *": "F.bf16s",
    "const lm_ggml_bf16_t *": "F.bf16s",
    "int64_t *": "F.i64s",
    "const int64_t *": "F.i64s",
    "const int *": "F.ints",
    "size_t *": "F.sizes",
    "float []": "F.floats",
    "int []": "F.ints",              # int sections[4] of rope_multi
    "double *": "F.doubles",
    "int32_t *": "F.i32s",
    "struct lm_ggml_context **": "&F.ctx_out",
    "struct lm_ggml_hash_set *": "&F.hash_set",
    "lm_ggml_backend_dev_t *": "F.devs",
    # training (ggml-opt.h)
    "lm_ggml_opt_dataset_t": "F.dataset",
    "lm_ggml_opt_context_t": "F.opt",
    "lm_ggml_opt_result_t": "F.result",
    "lm_ggml_opt_epoch_callback": "F.epoch_cb",
    "lm_ggml_opt_get_optimizer_params": "lm_ggml_opt_get_default_optimizer_params",
    # custom operators: a valid one is a no-op of the right type
    "lm_ggml_custom1_op_t": "F.custom1", "lm_ggml_custom2_op_t": "F.custom2", "lm_ggml_custom3_op_t": "F.custom3",
    "lm_ggml_unary_op_f32_t": "F.unary_f32", "lm_ggml_binary_op_f32_t": "F.binary_f32",
    "lm_ggml_custom1_op_f32_t": "F.custom1_f32", "lm_ggml_custom2_op_f32_t": "F.custom2_f32",
    "lm_ggml_custom3_op_f32_t": "F.custom3_f32",
    # pointer types only ever swept alone (no valid value needed)
    "lm_ggml_backend_rpc_server_t": None,
    "const struct lm_ggml_object *": None,
    # callbacks: a valid one is a no-op of the right type
    "lm_ggml_log_callback": "F.log_cb",
    "lm_ggml_abort_callback": "F.abort_cb",
    "lm_ggml_abort_handler_t": "F.abort_handler",
    "lm_ggml_backend_eval_callback": "F.eval_cb",
    "lm_ggml_backend_sched_eval_callback": "F.sched_eval_cb",
}

# Valid arguments that depend on the function, by (name prefix, parameter).
BY_FUNCTION = {
    ("lm_ggml_rope", "b"): "F.pos",  # positions: I32, one per row of F.t
    # a trainable model: so that only the NULL argument is wrong
    ("lm_ggml_opt_", "backend_sched"): "F.osched",
    ("lm_ggml_opt_", "ctx_compute"): "F.octx_compute",
    ("lm_ggml_opt_", "inputs"): "F.oinputs",
    ("lm_ggml_opt_", "outputs"): "F.ooutputs",
    ("lm_ggml_opt_grad_acc", "node"): "F.oweight",
    ("lm_ggml_opt_dataset_get_batch", "data_batch"): "F.data_batch",
    ("lm_ggml_opt_dataset_get_batch", "labels_batch"): "F.labels_batch",
}

# Scalars that depend on the function, by (name prefix, parameter): whole
# super-blocks for the row conversions, so that only the NULL is wrong.
SCALARS_BY_FUNCTION = {
    ("quantize_", "k"): "256", ("dequantize_", "k"): "256",
    ("quantize_", "n_per_row"): "256", ("quantize_", "nrows"): "1",
}

# Valid string arguments by parameter name (else "x").
STRINGS = {
    "fname": "F.missing_path", "path": "F.missing_path", "dir_path": "F.missing_path",
    "filename": "F.missing_path",
    "key": '"general.name"', "name": '"t"', "fmt": '"x"', "params": '""',
    # not "host:port": a server must not start, a client must not connect
    "endpoint": '"x"',
}

# Values for by-reference and block-pointer parameters.
def special_pointer(ptype):
    if re.match(r"^(const )?block_\w+ \*$", ptype):  # ggml-quants.h rows
        return "(%s) F.bytes" % ptype
    return None

# Values for by-value parameters.
STRUCTS = {
    "struct lm_ggml_init_params": "lm_ggml_init_params{4096, nullptr, true}",
    "struct lm_gguf_init_params": "lm_gguf_init_params{true, nullptr}",
    "struct lm_ggml_backend_graph_copy": "F.copy",
    "struct lm_ggml_backend_buffer_i": "lm_ggml_backend_buffer_i{}",
    "struct lm_ggml_opt_params": "F.opt_params",
}

ZERO_NAMES = {"offset", "offs", "i", "index", "key_id", "tensor_id", "i0", "i1", "i2", "i3", "ith", "start",
              "il", "node_index", "value", "p0", "p1", "d0", "d1", "s0", "s1", "dim", "axis", "mode",
              "ibatch", "idata_split", "t_start_us"}
# ALiBi (max_bias > 0) requires a mask: 0 keeps NULL masks valid.
ZERO_FLOAT_NAMES = {"max_bias", "logit_softcap", "ext_factor", "val_split"}
ONE_NAMES = {"n_threads", "nth", "n_dims", "n_dims_max", "n_backends", "n_buffers", "n_tasks"}


def scalar(ptype, pname):
    t = ptype.replace("const ", "").strip()
    if t == "bool":
        return "false"
    if t == "enum lm_ggml_type":
        return "LM_GGML_TYPE_F32"
    if t == "enum lm_gguf_type":
        return "LM_GGUF_TYPE_UINT32"
    if t == "enum lm_ggml_status":
        return "LM_GGML_STATUS_SUCCESS"
    if t.startswith("enum "):
        return "(%s) 0" % t
    if t in ("float", "double"):
        if pname in ZERO_FLOAT_NAMES:
            return "0.0f"
        return "1.0f" if t == "float" else "1.0"
    if t in STRUCTS:
        return STRUCTS[t]
    if pname in ZERO_NAMES:
        return "0"
    if pname in ONE_NAMES:
        return "1"
    return "4"


def is_pointer(ptype):
    t = ptype.replace("const ", "").strip()
    if re.match(r"^lm_ggml_\w+_t$", t) and t not in VALID and t not in VALUE_TYPEDEFS:
        raise SystemExit("gen_null_calls.py: unknown type '%s': a handle or callback (add it to VALID) "
                         "or a value (add it to VALUE_TYPEDEFS)?" % ptype)
    return "*" in ptype or ptype in VALID or ptype.endswith("[]")


# LM_GGML_DEPRECATED(LM_GGML_API <declaration>, "hint"); -> LM_GGML_API <declaration>;
def undeprecate(txt):
    return re.sub(r'LM_GGML_DEPRECATED\(\s*(LM_GGML_API[^;]*?\))\s*,\s*"[^"]*"\s*\)\s*;', r"\1;", txt, flags=re.S)


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_param(p):
    p = " ".join(p.replace("LM_GGML_RESTRICT", "").split())
    m = re.match(r"(.*?)(\w+)\s*\[(\d*)\]$", p)  # float dims[2]
    if m:
        return m.group(1).strip() + " []", m.group(2)
    m = re.match(r"(.*?)(\w+)$", p)
    if m is None or m.group(1).strip() == "":  # unnamed: "float *"
        ptype, pname = p, ""
    else:
        ptype, pname = m.group(1).strip(), m.group(2)
    ptype = re.sub(r"\s*\*\s*", " *", ptype).replace(" * *", " **").replace("* *", "**")
    ptype = ptype.replace(" **", " **")
    return ptype, pname


def declarations(src):
    decls = []
    for h in sorted(glob.glob(os.path.join(src, "include", "*.h"))):
        txt = open(h).read()
        txt = re.sub(r"//[^\n]*", "", txt)
        txt = re.sub(r"/\*.*?\*/", "", txt, flags=re.S)
        txt = undeprecate(txt)
        for m in re.finditer(r"LM_GGML_(?:BACKEND_)?API\s+([^;{}]*?)\s*\(([^;{}]*?)\)\s*;", txt, flags=re.S):
            head = " ".join(m.group(1).split())
            params = " ".join(m.group(2).split())
            mm = re.match(r"(.*?)\b(\w+)$", head)
            ret, name = mm.group(1).strip(), mm.group(2)
            if name in NOT_IN_LIBRARY or name in SKIP:
                continue
            plist = [] if params in ("void", "") else [parse_param(p) for p in split_params(params) if p != "..."]
            plist = [(t, n or "arg%d" % i) for i, (t, n) in enumerate(plist)]
            decls.append((os.path.basename(h), ret, name, plist))
    return decls


def ret_kind(ret):
    r = ret.replace("const ", "").strip()
    if r == "void":
        return "VOID"
    if r == "bool":
        return "BOOL"
    if r == "enum lm_ggml_status":
        return "STATUS"
    if "*" in r or r in VALID or r.endswith("_t") and r.startswith("lm_ggml_") and r not in ("lm_ggml_fp16_t",):
        if r.startswith("struct ") and "*" not in r:
            return "OTHER"
        return "PTR"
    return "OTHER"


def generate(src):
    lines = [
        "// Generated by tests/reliability/gen_null_calls.py from include/*.h: do not edit.",
        "// NULL_CASE(function, parameter index, parameter name, return kind, call)",
    ]
    n = 0
    for header, ret, name, plist in declarations(src):
        for i, (ptype, pname) in enumerate(plist):
            if not is_pointer(ptype):
                continue
            args = []
            for j, (qt, qn) in enumerate(plist):
                if j == i:
                    args.append("nullptr")
                elif is_pointer(qt):
                    special = [v for (prefix, pn), v in BY_FUNCTION.items() if name.startswith(prefix) and pn == qn]
                    if special:
                        args.append(special[0])
                    elif qt == "const char *" and qn in STRINGS:
                        args.append(STRINGS[qn])
                    elif special_pointer(qt):
                        args.append(special_pointer(qt))
                    elif VALID.get(qt) is not None:
                        args.append(VALID[qt])
                    else:
                        raise SystemExit("gen_null_calls.py: no valid value for '%s' (%s of %s)" % (qt, qn, name))
                else:
                    special = [v for (prefix, pn), v in SCALARS_BY_FUNCTION.items() if name.startswith(prefix) and pn == qn]
                    args.append(special[0] if special else scalar(qt, qn))
            macro = GUARDED.get(header, "NULL_CASE")
            lines.append('%s(%s, %d, "%s", %s, %s(%s))' % (macro, name, i, pname, ret_kind(ret), name, ", ".join(args)))
            n += 1
    lines.append("// %d cases" % n)
    return "\n".join(lines) + "\n"


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    out = os.path.join(src, "tests", "reliability", "null_calls.inc")
    text = generate(src)
    if "--check" in sys.argv:
        current = open(out).read() if os.path.exists(out) else ""
        if current != text:
            print("tests/reliability/null_calls.inc is out of date with include/*.h: "
                  "run tests/reliability/gen_null_calls.py .")
            return 1
        print("null_calls.inc is current (%s)" % text.strip().splitlines()[-1][3:])
        return 0
    with open(out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
