"""ovk against its Python peers, in one run on one machine (driven by peers/peers.sh).

Every comparison uses the very data ovk fitted: `ovk run --json` is run on a CSV written by
`ovk bench data`, and its session (train/test rows, resolved σ, predictions) is read back, so
the peer sees the same standardised rows, kernel width and λ. Times are of the fit alone
(Gram matrix included) on both sides; ratios are peer / ovk (> 1: ovk is faster).

Peers:
  * scikit-learn KernelRidge (the identity output kernel baseline, ovk `krr`);
  * operalib OVKRidge with the decomposable Gaussian kernel K ⊗ I (same model; run in a
    Python 3.8 venv through peers/operalib_peer.py, when peers/peers.sh could build one);
  * output kernel learning (ovk `okl`): the paper's block coordinate descent written here with
    scipy.linalg.solve_sylvester for the C-step and the symmetric L-update of docs/methods.md §1;
  * scikit-multimodallearn MVML: peers/mvml_peer.py on the splits `cargo bench --bench mvml`
    writes (peers/peers.sh runs both and this script joins their JSON).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import scipy
import scipy.linalg as sla
import sklearn
from sklearn.kernel_ridge import KernelRidge

LAMBDA = 0.1


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


class Ovk:
    def __init__(self, exe, work):
        self.exe = exe
        self.work = work
        self.store = os.path.join(work, "sessions")

    def data(self, n, m, seed=0):
        path = os.path.join(self.work, f"synthetic-n{n}-m{m}.csv")
        if not os.path.exists(path):
            sh([self.exe, "bench", "data", "--n", str(n), "--outputs", str(m),
                "--seed", str(seed), "--out", path])
        return path

    def run(self, path, n, method, *extra):
        cmd = [self.exe, "run", "--data", path, "--targets", "y_*", "--method", method,
               "--lambda", str(LAMBDA), "--test-fraction", repr(100.0 / (n + 100)),
               "--json", "--sessions", self.store, *extra]
        out = json.loads(sh(cmd).stdout)
        sess = out["session"]
        rec = json.load(open(os.path.join(sess, "session.json")))
        out["record"] = rec
        out["pred_test"] = np.load(os.path.join(sess, "predictions_test.npy"))
        return out


def split(path, rec):
    """The session's training/test rows, standardised as ovk does (training mean, ddof = 0)."""
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    head = open(path).readline().strip().split(",")
    xcols = [i for i, h in enumerate(head) if h.startswith("x_")]
    ycols = [i for i, h in enumerate(head) if h.startswith("y_")]
    tr, te = rec["split"]["train"], rec["split"]["test"]
    x, y = data[:, xcols], data[:, ycols]
    mu, sd = x[tr].mean(axis=0), x[tr].std(axis=0)
    sd[sd == 0] = 1.0
    return (x[tr] - mu) / sd, y[tr], (x[te] - mu) / sd, y[te]


def gaussian(a, b, sigma):
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.exp(-np.maximum(d, 0.0) / (2.0 * sigma * sigma))


def okl_objective(K, Y, C, L, lam):
    """Q(L, C) of Dinuzzo et al. eq. (3)."""
    KC = K @ C
    return (np.sum((Y - KC @ L) ** 2) / (2 * lam) + np.sum((C.T @ KC) * L) / 2
            + np.sum(L * L) / 2)


def okl_c_step(K, Y, L, lam):
    """C solving K C L + λ C = Y (eq. 6) by scipy's Bartels–Stewart: K C + C (λ L⁻¹) = Y L⁻¹."""
    if not np.any(L):
        return Y / lam
    Linv = np.linalg.inv(L)
    return sla.solve_sylvester(K, lam * Linv, Y @ Linv)


def okl_bcd(K, Y, lam, tol, max_seconds):
    """Algorithm 1 of Dinuzzo et al. with the symmetric L-step of docs/methods.md §1: from L = 0,
    C-step by solve_sylvester; L solving (R + λI) L + L (R + λI) = R L_p + L_p R + λ CᵀKC with
    R = EᵀE, E = KC; stop when ‖E L + λC − Y‖_F / ‖Y‖_F < tol."""
    m = Y.shape[1]
    L = np.zeros((m, m))
    ynorm = np.linalg.norm(Y)
    start = time.perf_counter()
    sweeps, rel, converged = 0, np.inf, False
    while True:
        C = okl_c_step(K, Y, L, lam)
        E = K @ C
        R = E.T @ E
        A = R + lam * np.eye(m)
        rhs = R @ L + L @ R + lam * (C.T @ E)
        L = sla.solve_sylvester(A, A, rhs)
        L = (L + L.T) / 2
        sweeps += 1
        rel = np.linalg.norm(E @ L + lam * C - Y) / ynorm
        if rel < tol:
            converged = True
            break
        if time.perf_counter() - start > max_seconds:
            break
    C = okl_c_step(K, Y, L, lam)
    return C, L, sweeps, rel, converged, time.perf_counter() - start


def compare_krr(ovk, n, m, rows, operalib_jobs):
    path = ovk.data(n, m)
    o = ovk.run(path, n, "krr")
    rec = o["record"]
    sigma = rec["kernel"]["resolved"]["sigma"]
    x, y, xt, yt = split(path, rec)
    model = KernelRidge(alpha=LAMBDA, kernel="rbf", gamma=1.0 / (2 * sigma * sigma))
    t0 = time.perf_counter()
    model.fit(x, y)
    secs = time.perf_counter() - t0
    diff = np.max(np.abs(model.predict(xt) - o["pred_test"]))
    rows.append(dict(case=f"krr n={len(x)} m={m}", peer="scikit-learn KernelRidge",
                     ovk_s=o["fit_seconds"], peer_s=secs,
                     agreement=f"max abs Δŷ = {diff:.1e}"))
    operalib_jobs.append(dict(case=f"krr n={len(x)} m={m}", data=path, sigma=sigma,
                              train=rec["split"]["train"], test=rec["split"]["test"],
                              lam=LAMBDA, ovk_s=o["fit_seconds"],
                              ovk_pred=os.path.join(o["session"], "predictions_test.npy")))


def compare_okl(ovk, n, m, rows, tol, max_seconds):
    path = ovk.data(n, m)
    q = ovk.run(path, n, "okl")
    b = ovk.run(path, n, "okl", "--solver", "bcd", "--tol", str(tol), "--max-iter", "1000000")
    rec = q["record"]
    sigma = rec["kernel"]["resolved"]["sigma"]
    x, y, xt, yt = split(path, rec)
    t0 = time.perf_counter()
    K = gaussian(x, x, sigma)
    C, L, sweeps, rel, conv, _ = okl_bcd(K, y, LAMBDA, tol, max_seconds)
    secs = time.perf_counter() - t0
    obj = okl_objective(K, y, C, L, LAMBDA)
    pred = gaussian(xt, x, sigma) @ C @ L
    dq = np.max(np.abs(pred - q["pred_test"]))
    status = "converged" if conv else f"stopped at {max_seconds:.0f} s"
    case = f"okl n={len(x)} m={m}"
    rows.append(dict(case=case, peer=f"Python BCD (solve_sylvester), tol {tol:g}",
                     ovk_s=q["fit_seconds"], peer_s=secs, capped=not conv,
                     agreement=(f"{sweeps} sweeps, {status}, residual {rel:.1e}; objective "
                                f"{obj:.6f} vs ovk qn {q['objective']:.6f} "
                                f"(rel. gap {(obj - q['objective']) / abs(q['objective']):.1e}); "
                                f"max abs Δŷ = {dq:.1e}")))
    per_sweep_py = secs / sweeps
    per_sweep_ovk = b["fit_seconds"] / max(b["iterations"], 1)
    rows.append(dict(case=case, peer="same BCD, time per sweep (ovk --solver bcd)",
                     ovk_s=per_sweep_ovk, peer_s=per_sweep_py,
                     agreement=(f"ovk bcd: {b['iterations']} sweeps in {b['fit_seconds']:.2f} s, "
                                f"{'converged' if b['converged'] else 'not converged'}, objective "
                                f"{b['objective']:.6f}")))


def run_operalib(python, jobs, work, rows, max_seconds):
    if not python:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    spec = os.path.join(work, "operalib_jobs.json")
    out = os.path.join(work, "operalib_results.json")
    json.dump(jobs, open(spec, "w"))
    try:
        subprocess.run([python, os.path.join(here, "operalib_peer.py"), spec, out],
                       check=True, timeout=max_seconds * len(jobs) + 60)
    except (subprocess.SubprocessError, OSError) as e:
        print(f"operalib run failed or timed out: {e}", file=sys.stderr)
    done = json.load(open(out)) if os.path.exists(out) else []
    for job in jobs:
        r = next((d for d in done if d["case"] == job["case"]), None)
        if r is None:
            rows.append(dict(case=job["case"], peer="operalib OVKRidge (DGauss, A = I)",
                             ovk_s=job["ovk_s"], peer_s=None, agreement="not run (time cap)"))
        else:
            rows.append(dict(case=job["case"], peer=r["peer"], ovk_s=job["ovk_s"],
                             peer_s=r["fit_s"], agreement=r["agreement"]))


def mvml_rows(bench_dir, rows):
    """Join `cargo bench --bench mvml`'s ovk figures with peers/mvml_peer.py's."""
    ours = os.path.join(bench_dir, "results.json")
    theirs = os.path.join(bench_dir, "peer_results.json")
    if not (os.path.exists(ours) and os.path.exists(theirs)):
        print(f"no MVML results in {bench_dir}", file=sys.stderr)
        return
    ovk = {(r["task"], r["variant"]): r for r in json.load(open(ours))}
    for r in json.load(open(theirs)):
        o = ovk.get((r["task"], r["variant"]))
        if o is None or r.get("fit_s") is None:
            continue
        rows.append(dict(case=f"mvml {r['task']} ({r['variant']}, p = {r['p']})",
                         peer="scikit-multimodallearn MVML", ovk_s=o["fit_s"],
                         peer_s=r.get("fit_s"),
                         agreement=f"{r['metric']}: ovk {o['score']:.3f}, reference {r['score']:.3f}"))


def fmt_s(s):
    if s is None:
        return "—"
    if s < 0.01:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s" if s < 0.1 else (f"{s:.2f} s" if s < 10 else f"{s:.1f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ovk", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--operalib-python", default="")
    ap.add_argument("--mvml-dir", default="")
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke test)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    ovk = Ovk(a.ovk, a.work)
    okl_cap = float(os.environ.get("PEER_OKL_MAX_SECONDS", "120"))
    operalib_cap = float(os.environ.get("PEER_OPERALIB_MAX_SECONDS", "300"))
    rows, jobs = [], []
    krr_sizes = [(300, 10)] if a.quick else [(1000, 10), (2000, 10), (4000, 10), (2000, 100)]
    okl_sizes = [(200, 5)] if a.quick else [(500, 10), (1000, 10)]
    for n, m in krr_sizes:
        compare_krr(ovk, n, m, rows, jobs)
        print(f"done: krr n={n} m={m}", file=sys.stderr, flush=True)
    operalib_max_n = int(os.environ.get("PEER_OPERALIB_MAX_N", "2000"))
    jobs = [j for j in jobs if len(j["train"]) <= operalib_max_n]
    run_operalib(a.operalib_python, jobs, a.work, rows, operalib_cap)
    for n, m in okl_sizes:
        compare_okl(ovk, n, m, rows, 1e-6, okl_cap)
        print(f"done: okl n={n} m={m}", file=sys.stderr, flush=True)
    if a.mvml_dir:
        mvml_rows(a.mvml_dir, rows)

    blas = "unknown"
    try:
        from threadpoolctl import threadpool_info
        blas = ", ".join(f"{p['internal_api']} {p.get('version', '')} ({p['num_threads']} thread"
                         f"{'s' if p['num_threads'] != 1 else ''})" for p in threadpool_info())
    except ImportError:
        pass
    print(f"\nPython {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"scikit-learn {sklearn.__version__}; BLAS: {blas}; ovk: OVK_THREADS="
          f"{os.environ.get('OVK_THREADS', 'unset')}, RAYON_NUM_THREADS="
          f"{os.environ.get('RAYON_NUM_THREADS', 'unset')}. λ = {LAMBDA}, Gaussian kernel at "
          f"ovk's median σ; times are fits only (Gram included); ratio = peer / ovk.\n")
    print("| case | peer | ovk | peer | ratio | agreement |")
    print("|---|---|---:|---:|---:|---|")
    for r in rows:
        ratio = (f"{'> ' if r.get('capped') else ''}{r['peer_s'] / r['ovk_s']:.1f}×"
                 if r["peer_s"] is not None and r["ovk_s"] else "—")
        print(f"| {r['case']} | {r['peer']} | {fmt_s(r['ovk_s'])} | {fmt_s(r['peer_s'])} | "
              f"{ratio} | {r['agreement']} |")
    json.dump(rows, open(os.path.join(a.work, "peers.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
