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
# Ends the process by design (the abort-handler death tests cover it).
SKIP = {"lm_ggml_abort"}

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
}

# Valid string arguments by parameter name (else "x").
STRINGS = {
    "fname": "F.missing_path", "path": "F.missing_path", "dir_path": "F.missing_path",
    "key": '"general.name"', "name": '"t"', "fmt": '"x"', "params": '""',
}

# Values for by-value parameters.
STRUCTS = {
    "struct lm_ggml_init_params": "lm_ggml_init_params{4096, nullptr, true}",
    "struct lm_gguf_init_params": "lm_gguf_init_params{true, nullptr}",
    "struct lm_ggml_backend_graph_copy": "F.copy",
    "struct lm_ggml_backend_buffer_i": "lm_ggml_backend_buffer_i{}",
}

ZERO_NAMES = {"offset", "offs", "i", "index", "key_id", "tensor_id", "i0", "i1", "i2", "i3", "ith", "start",
              "il", "node_index", "value", "p0", "p1", "d0", "d1", "s0", "s1", "dim", "axis", "mode"}
# ALiBi (max_bias > 0) requires a mask: 0 keeps NULL masks valid.
ZERO_FLOAT_NAMES = {"max_bias", "logit_softcap", "ext_factor"}
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
    return "*" in ptype or ptype in VALID or ptype.endswith("[]")


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
                    elif qt in VALID:
                        args.append(VALID[qt])
                    else:
                        raise SystemExit("gen_null_calls.py: no valid value for '%s' (%s of %s)" % (qt, qn, name))
                else:
                    args.append(scalar(qt, qn))
            lines.append('NULL_CASE(%s, %d, "%s", %s, %s(%s))' % (name, i, pname, ret_kind(ret), name, ", ".join(args)))
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
