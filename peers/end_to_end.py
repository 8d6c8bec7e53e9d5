"""Issue 36's side-by-side rows (driven by peers/peers.sh; `PEERS_ONLY=issue36` runs them alone).

Run with two threads on both sides: peers.sh starts this script with OPENBLAS/OMP/MKL and
POLARS_MAX_THREADS at PEERS_THREADS (2), and ovk without OVK_THREADS or RAYON_NUM_THREADS (its
default, every core: 2 on the 2-core machine of docs/performance.md).

Every row is interleaved: ovk, peer, ovk, peer, … and reports the median of the per-pair
ratios ovk ÷ peer (< 1: ovk is faster), so a change of load between pairs cancels out.

  * End to end, low rank (usps, tmc2007 and the synthetic 10⁵–10⁶ curve): `ovk run` whole
    process wall (load, factor, fit, predictions, session save) against the peer's polars
    read_csv + StandardScaler on the training rows + Nystroem(rbf, γ = 1/(2σ²), r) + Ridge +
    predictions on the test rows, timed inside one Python process (imports excluded). The peer
    uses ovk's σ (the median heuristic, read from ovk's session) and ovk's model: krr on a
    factor is ridge on the features z(x) with no intercept, W = (ZᵀZ + λI)⁻¹ZᵀY, so
    Ridge(alpha = λ, fit_intercept = False) on the same ±1 coding; the first usps row checks it
    by refitting Ridge on ovk's own landmarks. One peer run sits between ovk's krr and okl
    runs of each pair, so both ratios use it.
  * Exact krr at n = 8000 against KernelRidge (fits, Gram included).
  * Exact okl at n = 4000 and 8000 against one numpy.linalg.eigh of the same Gram (eigh only),
    and ovk's own `ovk bench one --method eigh` beside it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import polars as pl
import scipy
import sklearn
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.metrics import roc_auc_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

# Rows of Nystroem.transform per block: sklearn's transform holds two n×r arrays at once, 16 GB
# at 10⁶ rows and r = 1000; by blocks the peer holds Z alone, as ovk does.
BLOCK = 65536


def load_avg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def ovk_env():
    env = dict(os.environ)
    for k in ("OVK_THREADS", "RAYON_NUM_THREADS"):
        env.pop(k, None)
    return env


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def median_ratio(ovk_s, peer_s):
    return statistics.median(o / p for o, p in zip(ovk_s, peer_s))


class Ovk:
    def __init__(self, exe, work):
        self.exe = exe
        self.work = work
        self.store = os.path.join(work, "sessions-e2e")

    def data(self, n, m=10, seed=0):
        path = os.path.join(self.work, f"synthetic-n{n}-m{m}.csv")
        if not os.path.exists(path):
            subprocess.run([self.exe, "bench", "data", "--n", str(n), "--outputs", str(m),
                            "--seed", str(seed), "--out", path], check=True)
        return path

    def run(self, path, args):
        """One `ovk run --json` as its own process: its wall time and its session's record."""
        cmd = [self.exe, "run", "--data", path, *args, "--json", "--sessions", self.store]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=ovk_env())
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(f"ovk run failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
        out = json.loads(p.stdout)
        sess = out["session"]
        with open(os.path.join(sess, "session.json")) as f:
            rec = json.load(f)
        pred = np.load(os.path.join(sess, "predictions_test.npy"))
        return dict(wall=wall, json=out, record=rec, pred=pred, session=sess)

    def bench_one(self, method, n):
        p = subprocess.run([self.exe, "bench", "one", "--method", method, "--n", str(n),
                            "--sessions", self.store], capture_output=True, text=True,
                           env=ovk_env(), check=True)
        return json.loads(p.stdout)


def read_table(path):
    """The peer's load: polars' CSV reader, every column as f64 (the files mix 0 and 0.425)."""
    with open(path) as f:
        head = f.readline().strip().split(",")
    return pl.read_csv(path, schema_overrides={c: pl.Float64 for c in head})


class Task:
    """Which columns are inputs and outputs, how the split is made, and the score."""

    def __init__(self, name, path, ovk_args, lam, metric, inputs, split_column=None,
                 class_column=None, label_prefix=None):
        self.name, self.path, self.ovk_args, self.lam = name, path, ovk_args, lam
        self.metric, self.inputs = metric, inputs
        self.split_column, self.class_column, self.label_prefix = (
            split_column, class_column, label_prefix)

    def xy(self, df):
        x = df.select([c for c in df.columns if c.startswith(self.inputs)]).to_numpy()
        if self.class_column:
            y = df[self.class_column].to_numpy()
            classes = np.unique(y)
            y = np.where(y[:, None] == classes[None, :], 1.0, -1.0)  # ovk's pm1 one-hot
        else:
            y = df.select([c for c in df.columns if c.startswith(self.label_prefix)]).to_numpy()
            if self.metric == "mean AUC":
                y = 2.0 * y - 1.0  # ovk's pm1 coding of 0/1 labels
        return x, y

    def score(self, pred, y):
        if self.metric == "accuracy":
            return float(np.mean(pred.argmax(1) == y.argmax(1)))
        if self.metric == "mean AUC":
            aucs = [roc_auc_score(y[:, j] > 0, pred[:, j]) for j in range(y.shape[1])
                    if 0 < np.sum(y[:, j] > 0) < len(y)]
            return float(np.mean(aucs))
        return float(np.mean((pred - y) ** 2))


def peer_nystroem_ridge(task, r, sigma, lam, split):
    """The peer, timed from the CSV to the test predictions, phase by phase. `split` = (train,
    test) index lists for a random split (synthetic data: ovk's own); None reads the task's
    split column."""
    t = [time.perf_counter()]
    df = read_table(task.path)
    x, y = task.xy(df)
    if split is None:
        test = df[task.split_column].to_numpy() != 0
        tr, te = np.flatnonzero(~test), np.flatnonzero(test)
    else:
        tr, te = split
    t.append(time.perf_counter())
    scaler = StandardScaler().fit(x[tr])
    xtr, xte = scaler.transform(x[tr]), scaler.transform(x[te])
    ny = Nystroem(kernel="rbf", gamma=1.0 / (2 * sigma * sigma), n_components=r, random_state=0)
    ny.fit(xtr)
    z = np.empty((len(tr), r))
    for i in range(0, len(tr), BLOCK):
        z[i:i + BLOCK] = ny.transform(xtr[i:i + BLOCK])
    t.append(time.perf_counter())
    model = Ridge(alpha=lam, fit_intercept=False).fit(z, y[tr])
    del z
    t.append(time.perf_counter())
    pred = model.predict(ny.transform(xte))
    t.append(time.perf_counter())
    return dict(secs=t[-1] - t[0], load_s=t[1] - t[0], features_s=t[2] - t[1],
                ridge_s=t[3] - t[2], predict_s=t[4] - t[3], pred=pred, y_test=y[te])


def ridge_on_ovk_landmarks(task, o, lam):
    """max |Δŷ| between ovk's krr and Ridge on ovk's own factor (its landmarks): the model
    check."""
    rec = o["record"]
    x, y = task.xy(read_table(task.path))
    tr, te = rec["split"]["train"], rec["split"]["test"]
    scaler = StandardScaler().fit(x[tr])
    xtr, xte = scaler.transform(x[tr]), scaler.transform(x[te])
    land = np.load(os.path.join(o["session"], "model_landmarks.npy"))
    g = 1.0 / (2 * rec["kernel"]["resolved"]["sigma"] ** 2)
    w, v = np.linalg.eigh(rbf_kernel(land, land, gamma=g))
    norm = (v / np.sqrt(np.maximum(w, 1e-12))) @ v.T
    z, zt = rbf_kernel(xtr, land, gamma=g) @ norm, rbf_kernel(xte, land, gamma=g) @ norm
    pred = Ridge(alpha=lam, fit_intercept=False).fit(z, y[tr]).predict(zt)
    return float(np.max(np.abs(pred - o["pred"])))


def phases(o):
    t = o["record"].get("timings", {})
    f = o["json"].get("input_factor") or {}
    return dict(load_s=t.get("load_s"), fit_s=t.get("fit_s"), predict_s=t.get("predict_s"),
                total_s=t.get("total_s"), factor_s=f.get("seconds"))


def med(values):
    return statistics.median(values) if values else None


def end_to_end(ovk, task, r, pairs, rows, check=False, sigma_given=False):
    """Pairs of (ovk krr, peer on PEERS_THREADS, ovk okl, peer on one BLAS thread[, ovk krr with
    --sigma]): every ovk run's ratios against the same pair's two peer runs (2-thread OpenBLAS
    can be the slower peer on a loaded 2-core machine). `sigma_given` adds krr told the σ the
    peer is told, so neither side pays for the median heuristic."""
    base = [*task.ovk_args, "--lambda", repr(task.lam), "--input-rank", str(r)]
    variants = ["krr", "okl"] + (["krr, σ given"] if sigma_given else [])
    runs = {v: [] for v in variants}
    peer, peer1, loads = [], [], []
    for i in range(pairs):
        loads.append(load_avg())
        runs["krr"].append(ovk.run(task.path, [*base, "--method", "krr"]))
        first = runs["krr"][0]["record"]
        sigma = first["kernel"]["resolved"]["sigma"]
        split = None
        if task.split_column is None:
            split = (first["split"]["train"], first["split"]["test"])
        peer.append(peer_nystroem_ridge(task, r, sigma, task.lam, split))
        runs["okl"].append(ovk.run(task.path, [*base, "--method", "okl"]))
        with threadpool_limits(limits=1):
            peer1.append(peer_nystroem_ridge(task, r, sigma, task.lam, split))
        if sigma_given:
            runs["krr, σ given"].append(
                ovk.run(task.path, [*base, "--method", "krr", "--sigma", repr(sigma)]))
        walls = ", ".join(f"ovk {v} {runs[v][-1]['wall']:.2f} s" for v in variants)
        print(f"  {task.name} r={r} pair {i + 1}: {walls}; peer {peer[-1]['secs']:.2f} s, "
              f"on one BLAS thread {peer1[-1]['secs']:.2f} s (load {loads[-1]})",
              file=sys.stderr, flush=True)
    loads.append(load_avg())
    peer_score = task.score(peer[0]["pred"], peer[0]["y_test"])
    note = ""
    if check:
        gap = ridge_on_ovk_landmarks(task, runs["krr"][0], task.lam)
        note = f"; Ridge on ovk's landmarks: max abs Δŷ = {gap:.1e}"
    y_all = task.xy(read_table(task.path))[1]
    keys = ("load_s", "features_s", "ridge_s", "predict_s")
    for v in variants:
        o = runs[v]
        rec = o[0]["record"]
        ovk_score = task.score(o[0]["pred"], y_all[rec["split"]["test"]])
        ph = [phases(x) for x in o]
        walls = [x["wall"] for x in o]
        rows.append(dict(
            part="end to end", case=f"{task.name} {v} r={r}",
            peer="polars + StandardScaler + Nystroem + Ridge",
            n_train=len(rec["split"]["train"]), pairs=pairs, ovk_s=walls,
            peer_s=[p["secs"] for p in peer], peer1_s=[p["secs"] for p in peer1],
            ratio=median_ratio(walls, [p["secs"] for p in peer]),
            ovk_phases={k: med([p[k] for p in ph if p[k] is not None]) for k in ph[0]},
            peer_phases={k: med([p[k] for p in peer]) for k in keys},
            peer1_phases={k: med([p[k] for p in peer1]) for k in keys},
            peer_load_s=med([p["load_s"] for p in peer]),
            metric=task.metric, ovk_score=ovk_score, peer_score=peer_score,
            sigma=rec["kernel"]["resolved"]["sigma"], lam=task.lam, loads=loads,
            note=note if v == "krr" else ""))


def gaussian_split(path, rec):
    """The session's training rows, standardised as ovk does (training mean, ddof = 0)."""
    df = read_table(path)
    x = df.select([c for c in df.columns if c.startswith("x_")]).to_numpy()
    y = df.select([c for c in df.columns if c.startswith("y_")]).to_numpy()
    tr = rec["split"]["train"]
    scaler = StandardScaler().fit(x[tr])
    return scaler.transform(x[tr]), y[tr]


def exact_krr(ovk, n, pairs, rows, lam=0.1):
    path = ovk.data(n)
    args = ["--targets", "y_*", "--method", "krr", "--input-rank", "exact", "--lambda",
            repr(lam), "--test-fraction", repr(100.0 / (n + 100))]
    o, p, p1, loads = [], [], [], []
    for i in range(pairs):
        loads.append(load_avg())
        o.append(ovk.run(path, args))
        rec = o[0]["record"]
        x, y = gaussian_split(path, rec)
        sigma = rec["kernel"]["resolved"]["sigma"]
        model = KernelRidge(alpha=lam, kernel="rbf", gamma=1.0 / (2 * sigma * sigma))
        p.append(timed(lambda: model.fit(x, y)))
        with threadpool_limits(limits=1):
            p1.append(timed(lambda: model.fit(x, y)))
        print(f"  krr exact n={n} pair {i + 1}: ovk fit {o[-1]['json']['fit_seconds']:.2f} s, "
              f"KernelRidge fit {p[-1]:.2f} s, on one thread {p1[-1]:.2f} s (load {loads[-1]})",
              file=sys.stderr, flush=True)
    loads.append(load_avg())
    fits = [x["json"]["fit_seconds"] for x in o]
    rows.append(exact_row(f"krr exact n={n} m=10", "KernelRidge fit", fits, p, loads,
                          f"fits, Gram included; KernelRidge on one BLAS thread "
                          f"{statistics.median(p1):.2f} s, ovk ÷ it "
                          f"{median_ratio(fits, p1):.2f}×"))


def exact_row(case, peer, fits, peer_s, loads, note):
    return dict(part="exact", case=case, peer=peer, pairs=len(fits), ovk_s=fits,
                peer_s=peer_s, ratio=median_ratio(fits, peer_s), loads=loads, note=note)


def exact_okl(ovk, n, pairs, rows, lam=0.1):
    path = ovk.data(n)
    args = ["--targets", "y_*", "--method", "okl", "--input-rank", "exact", "--lambda",
            repr(lam), "--test-fraction", repr(100.0 / (n + 100))]
    o, p, p1, own, loads = [], [], [], [], []
    gram = None
    for i in range(pairs):
        loads.append(load_avg())
        o.append(ovk.run(path, args))
        if gram is None:
            rec = o[0]["record"]
            x, _ = gaussian_split(path, rec)
            sigma = rec["kernel"]["resolved"]["sigma"]
            gram = rbf_kernel(x, x, gamma=1.0 / (2 * sigma * sigma))
        p.append(timed(lambda: np.linalg.eigh(gram)))
        with threadpool_limits(limits=1):
            p1.append(timed(lambda: np.linalg.eigh(gram)))
        own.append(ovk.bench_one("eigh", n)["eigh_s"])
        print(f"  okl exact n={n} pair {i + 1}: ovk fit {o[-1]['json']['fit_seconds']:.2f} s, "
              f"numpy eigh {p[-1]:.2f} s, on one thread {p1[-1]:.2f} s, ovk eigh {own[-1]:.2f} s "
              f"(load {loads[-1]})", file=sys.stderr, flush=True)
    loads.append(load_avg())
    del gram
    fits = [x["json"]["fit_seconds"] for x in o]
    rows.append(exact_row(f"okl exact n={n} m=10", "numpy.linalg.eigh of K", fits, p, loads,
                          f"numpy eigh on one BLAS thread {statistics.median(p1):.2f} s, "
                          f"okl ÷ it {median_ratio(fits, p1):.2f}×; ovk's own eigh (`ovk bench "
                          f"one --method eigh`) {statistics.median(own):.2f} s, okl ÷ it "
                          f"{median_ratio(fits, own):.2f}×"))


def phase_text(ph):
    if not ph:
        return "—"
    keys = ("load_s", "features_s", "ridge_s", "predict_s")
    return " / ".join(f"{ph[k]:.2f}" for k in keys) + " s"


def fmt_s(values):
    s = statistics.median(values)
    return f"{s:.3f} s" if s < 0.1 else (f"{s:.2f} s" if s < 10 else f"{s:.1f} s")


def markdown(rows, header):
    out = [header, ""]
    e2e = [r for r in rows if r["part"] == "end to end"]
    if e2e:
        out += ["| case | train rows | pairs | ovk run | ovk load / fit (factor) / predict | "
                "peer, 2 threads | ovk ÷ it | peer, 1 BLAS thread | ovk ÷ it | its read / "
                "features / ridge / predict | score ovk / peer | load avg |",
                "|---|---:|---:|---:|---|---:|---:|---:|---:|---|---|---|"]
        for r in e2e:
            ph = r["ovk_phases"]
            one = (f"{fmt_s(r['peer1_s'])} | **{median_ratio(r['ovk_s'], r['peer1_s']):.2f}×**"
                   if r["peer1_s"] else "— | —")
            out.append(
                f"| {r['case']} | {r['n_train']} | {r['pairs']} | {fmt_s(r['ovk_s'])} | "
                f"{ph.get('load_s', 0):.2f} / {ph.get('fit_s', 0):.2f} "
                f"({ph.get('factor_s', 0):.2f}) / {ph.get('predict_s', 0):.2f} s | "
                f"{fmt_s(r['peer_s'])} | **{r['ratio']:.2f}×** | {one} | "
                f"{phase_text(r.get('peer1_phases'))} | "
                f"{r['metric']} {r['ovk_score']:.4f} / {r['peer_score']:.4f}{r['note']} | "
                f"{r['loads'][0]} → {r['loads'][-1]} |")
        out.append("")
    exact = [r for r in rows if r["part"] == "exact"]
    if exact:
        out += ["| case | peer | pairs | ovk fit (median) | peer (median) | ovk ÷ peer | note | "
                "load avg |", "|---|---|---:|---:|---:|---:|---|---|"]
        for r in exact:
            out.append(f"| {r['case']} | {r['peer']} | {r['pairs']} | {fmt_s(r['ovk_s'])} | "
                       f"{fmt_s(r['peer_s'])} | **{r['ratio']:.2f}×** | {r['note']} | "
                       f"{r['loads'][0]} → {r['loads'][-1]} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ovk", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--data-dir", required=True, help="folder with usps.csv and tmc2007.csv")
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke test)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated parts: real, synthetic, exact")
    ap.add_argument("--sizes", default="100000,300000,1000000",
                    help="training rows of the synthetic curve, comma-separated")
    ap.add_argument("--render", nargs="*", default=None,
                    help="print the tables of earlier runs' end_to_end-*.json and stop")
    a = ap.parse_args()
    if a.render is not None:
        rows = []
        for path in a.render:
            with open(path) as f:
                rows += json.load(f)
        print(markdown(rows, ""))
        return
    os.makedirs(a.work, exist_ok=True)
    ovk = Ovk(a.ovk, a.work)
    parts = set(a.only.split(",")) if a.only else {"real", "synthetic", "exact"}
    usps = Task("usps", os.path.join(a.data_dir, "usps.csv"),
                ["--class", "digit", "--test-column", "is_test"], 0.1, "accuracy", "p_",
                split_column="is_test", class_column="digit")
    tmc = Task("tmc2007", os.path.join(a.data_dir, "tmc2007.csv"),
               ["--targets", "label_*", "--test-column", "is_test"], 1.0, "mean AUC", "w_",
               split_column="is_test", label_prefix="label_")
    rows = []
    pairs = 1 if a.quick else a.pairs
    if "real" in parts:
        for task in ([usps] if a.quick else [usps, tmc]):
            ranks = [200] if a.quick else [1000, 2000]
            for r in ranks:
                end_to_end(ovk, task, r, pairs, rows, check=(task is usps and r == ranks[0]),
                           sigma_given=True)
                save(a, rows)
    if "synthetic" in parts:
        for n in ([20000] if a.quick else [int(v) for v in a.sizes.split(",")]):
            syn = Task(f"synthetic n={n}", ovk.data(n), ["--targets", "y_*", "--test-fraction",
                       repr(100.0 / (n + 100))], 0.1, "test MSE", "x_", label_prefix="y_")
            end_to_end(ovk, syn, 1000, min(pairs, 2) if n >= 1_000_000 else pairs, rows)
            save(a, rows)
    if "exact" in parts:
        exact_krr(ovk, 1000 if a.quick else 8000, pairs, rows)
        for n in ([1000] if a.quick else [4000, 8000]):
            exact_okl(ovk, n, min(pairs, 2) if n >= 8000 else pairs, rows)

    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    header = (f"Python {sys.version.split()[0]}, numpy {np.__version__}, scipy "
              f"{scipy.__version__}, scikit-learn {sklearn.__version__}, polars {pl.__version__}; "
              f"peer threads: OPENBLAS_NUM_THREADS={threads}, POLARS_MAX_THREADS="
              f"{os.environ.get('POLARS_MAX_THREADS', 'unset')}; ovk: OVK_THREADS unset (every "
              f"core: {os.cpu_count()}). Ratio = median over pairs of ovk ÷ peer (< 1: ovk is "
              f"faster); times are wall upper bounds on a shared machine.")
    print(markdown(rows, header))
    save(a, rows)


def save(a, rows):
    """The rows so far, as JSON in the work folder (`--render` prints them again)."""
    tag = a.only.replace(",", "-") or "all"
    with open(os.path.join(a.work, f"end_to_end-{tag}.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
