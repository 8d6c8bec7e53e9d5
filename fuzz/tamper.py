#!/usr/bin/env python3
"""Edit a copy of a saved ovk session the way an attacker (or a careless hand) would, for
`hostile.sh`: `tamper.py SESSION_DIR OP` applies one named edit in place and exits 0; exits 3
when OP does not apply to this session, and 4 when the edit leaves a model a fit could have made
(a square array transposed, two arrays of one shape swapped): nothing in the session can tell
it from a real one — `ovk replay --verify` re-runs the fit and does. The harness counts those
apart. Standard library only (no numpy): `.npy` files are rewritten byte for byte."""

import ast
import json
import struct
import sys
from pathlib import Path


def load(d):
    return json.loads((d / "session.json").read_text())


def save(d, rec):
    (d / "session.json").write_text(json.dumps(rec, indent=1))


def read_npy(p):
    b = p.read_bytes()
    major = b[6]
    if major == 1:
        hlen = struct.unpack("<H", b[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", b[8:12])[0]
        start = 12
    header = ast.literal_eval(b[start : start + hlen].decode("latin1"))
    data = b[start + hlen :]
    return header, data


def write_npy(p, shape, values, fortran=False):
    header = "{'descr': '<f8', 'fortran_order': %s, 'shape': %s, }" % (fortran, repr(tuple(shape)))
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    body = struct.pack("<%dd" % len(values), *values)
    p.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + body)


def matrix(p):
    h, data = read_npy(p)
    shape = h["shape"]
    if len(shape) != 2 or h["descr"] != "<f8" or h["fortran_order"]:
        return None
    r, c = shape
    vals = list(struct.unpack("<%dd" % (r * c), data[: 8 * r * c]))
    return r, c, vals


def transpose(p):
    m = matrix(p)
    if m is None:
        return False
    r, c, v = m
    if r == c and r > 1:
        t = [v[j * c + i] for i in range(r) for j in range(c)]
        write_npy(p, (c, r), t)
        return True
    if r == 1 or c == 1 or r == c:
        return False
    t = [v[j * c + i] for i in range(c) for j in range(r)]
    write_npy(p, (c, r), t)
    return True


def kernels(rec):
    """Every kernel the model's settings hold (a top-level one, or one per view)."""
    s = rec["model"]["settings"]
    out = []
    if isinstance(s.get("kernel"), dict):
        out.append(s["kernel"])
    for v in s.get("views", []):
        out.append(v["kernel"])
    return out


def main():
    d, op = Path(sys.argv[1]), sys.argv[2]
    rec = load(d)
    m = rec.get("model")
    if m is None:
        sys.exit(3)
    arrays = m["arrays"]

    def sigma(value):
        ks = [k for k in kernels(rec) if "sigma" in k]
        if not ks:
            sys.exit(3)
        for k in ks:
            k["sigma"] = value(k["sigma"])

    if op.startswith("sigma="):
        v = float(op[6:])
        sigma(lambda _: v)
    elif op == "sigma*2":
        sigma(lambda s: s * 2)
    elif op == "kernel=laplacian":
        ks = [k for k in kernels(rec) if k.get("name") == "gaussian"]
        if not ks:
            sys.exit(3)
        for k in ks:
            k["name"] = "laplacian"
    elif op == "kernel=polynomial-deg100":
        ks = kernels(rec)
        if not ks:
            sys.exit(3)
        ks[0].clear()
        ks[0].update({"name": "polynomial", "degree": 100, "coef0": 1.0})
    elif op == "kernel=bogus":
        ks = kernels(rec)
        if not ks:
            sys.exit(3)
        ks[0]["name"] = "bogus"
    elif op.startswith("std0="):
        m["scaler"]["std"][0] = float(op[5:])
    elif op.startswith("mean0="):
        m["scaler"]["mean"][0] = float(op[6:])
    elif op == "scaler-short":
        m["scaler"]["std"].pop()
        m["scaler"]["mean"].pop()
    elif op == "scale-none":
        rec["scale"] = "none"
    elif op == "dup-feature":
        f = rec["feature_names"]
        if len(f) < 2:
            sys.exit(3)
        f[1] = f[0]
    elif op == "dup-output":
        o = rec["output_names"]
        if len(o) < 2:
            sys.exit(3)
        o[1] = o[0]
    elif op == "drop-output":
        o = rec["output_names"]
        if len(o) < 2:
            sys.exit(3)
        o.pop()
    elif op == "extra-output":
        rec["output_names"].append("extra")
    elif op == "drop-feature":
        f = rec["feature_names"]
        if len(f) < 2:
            sys.exit(3)
        f.pop()
    elif op == "class-short":
        c = m.get("class")
        if not c:
            sys.exit(3)
        c["values"].pop()
    elif op == "class-dup":
        c = m.get("class")
        if not c or len(c["values"]) < 2:
            sys.exit(3)
        c["values"][1] = c["values"][0]
    elif op == "target-scaler-add":
        if m.get("target_scaler"):
            sys.exit(3)
        n = len(rec["output_names"])
        m["target_scaler"] = {"mean": [5.0] * n, "std": [2.0] * n}
    elif op == "target-scaler-neg":
        t = m.get("target_scaler")
        if not t:
            sys.exit(3)
        t["std"][0] = -1.0
    elif op == "target-scaler-short":
        t = m.get("target_scaler")
        if not t:
            sys.exit(3)
        t["std"].pop()
        t["mean"].pop()
    elif op == "fill-short":
        if not m.get("fill"):
            sys.exit(3)
        m["fill"].pop()
    elif op == "kind-bogus":
        m["kind"] = "bogus"
    elif op == "array-unlisted":
        arrays.pop()
    elif op == "view-column-out":
        v = m["settings"].get("views")
        if not v:
            sys.exit(3)
        v[0]["columns"][0] = 10**6
    elif op == "dtype-text":
        if not m.get("feature_dtypes"):
            sys.exit(3)
        m["feature_dtypes"][0] = "str"
    elif op.startswith("transpose:"):
        name = op.split(":", 1)[1]
        p = d / ("model_%s.npy" % name)
        if name not in arrays or matrix(p) is None:
            sys.exit(3)
        r, c, _ = matrix(p)
        if not transpose(p):
            sys.exit(3)
        # L_S is triangular: its transpose is no factor a fit makes. Any other square array's is.
        sys.exit(4 if r == c and name != "l_s" else 0)
    elif op.startswith("nan:"):
        name = op.split(":", 1)[1]
        p = d / ("model_%s.npy" % name)
        if name not in arrays or matrix(p) is None:
            sys.exit(3)
        r, c, v = matrix(p)
        v[0] = float("nan")
        write_npy(p, (r, c), v)
        return
    elif op.startswith("truncate:"):
        name = op.split(":", 1)[1]
        p = d / ("model_%s.npy" % name)
        if name not in arrays:
            sys.exit(3)
        b = p.read_bytes()
        p.write_bytes(b[: max(10, len(b) // 2)])
        return
    elif op.startswith("swap-files:"):
        a, b = op.split(":", 1)[1].split(",")
        if a not in arrays or b not in arrays:
            sys.exit(3)
        pa, pb = d / ("model_%s.npy" % a), d / ("model_%s.npy" % b)
        ba, bb = pa.read_bytes(), pb.read_bytes()
        pa.write_bytes(bb)
        pb.write_bytes(ba)
        same = matrix(pa) is not None and matrix(pb) is not None and matrix(pa)[:2] == matrix(pb)[:2]
        sys.exit(4 if same else 0)
    elif op.startswith("cv="):
        # `--collect`: an edited fold count (an integer literal, so JSON keeps it exact)
        folds, fold = op[3:].split(",")
        rec["config"]["data"]["cv"] = {"folds": json.loads(folds), "fold": json.loads(fold)}
        (d / "session.json").write_text(json.dumps(rec, indent=1))
        return
    else:
        print("unknown op " + op, file=sys.stderr)
        sys.exit(5)
    save(d, rec)


if __name__ == "__main__":
    main()
