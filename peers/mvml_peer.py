"""Run scikit-multimodallearn's MVML (Huusari et al.'s lab) on the splits `cargo bench --bench mvml`
wrote, with the same hyperparameters, and print score and fit time beside ovk's table.

Reads $MVML_BENCH_DIR/setup.json (default /tmp/ovk_mvml_bench). Each task file holds rows
`split,y,features...` already standardised; training rows are in the order that makes the
reference's Nyström sample (the first p training points) the one ovk draws.
Exact fits above $PEER_MAX_EXACT_N training points (default 500) are skipped: the reference
pseudo-inverts the nv×nv matrix A every inner step (about 9 minutes at n = 1000, v = 6)."""

import json
import logging
import os
import sys
import time
import warnings

import numpy as np
from multimodal.kernels.mvml import MVML

# the reference warns about ill-conditioned inverses on almost every fit; keep the table readable
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)

bench_dir = os.environ.get("MVML_BENCH_DIR", "/tmp/ovk_mvml_bench")
max_exact = int(os.environ.get("PEER_MAX_EXACT_N", "500"))
max_nystrom = int(os.environ.get("PEER_MAX_NYSTROM_N", "1000"))
# run only the tasks whose name contains one of these comma-separated substrings
only = [o for o in os.environ.get("PEER_ONLY", "").split(",") if o] or [""]
# PEER_VARIANTS=exact,12%: run only these variants (labels as printed)
variants_only = [v for v in os.environ.get("PEER_VARIANTS", "").split(",") if v]
results = []  # written to $MVML_BENCH_DIR/peer_results.json for peers/peers.py


def save_results():
    json.dump(results, open(os.path.join(bench_dir, "peer_results.json"), "w"), indent=1)

setup_path = os.path.join(bench_dir, "setup.json")
if not os.path.exists(setup_path):
    sys.exit(f"{setup_path} is missing: run `cargo bench --bench mvml` first")
setup = json.load(open(setup_path))


def load(task):
    rows = [l.split(",") for l in open(task["file"]).read().splitlines() if l]
    split = np.array([r[0] for r in rows])
    data = np.array([[float(v) for v in r[1:]] for r in rows])
    tr, te = split == "train", split == "test"
    return data[tr, 1:], data[tr, 0], data[te, 1:], data[te, 0]


def fit_score(task, x, y, xt, yt, fraction):
    sizes = task["view_sizes"]
    views_ind = np.concatenate([[0], np.cumsum(sizes)])
    gammas = [{"gamma": 1.0 / (2.0 * s * s)} for s in task["sigmas"]]
    model = MVML(lmbda=setup["lambda"], eta=setup["eta"], nystrom_param=fraction,
                 kernel=["rbf"] * len(sizes), kernel_params=gammas, learn_A=1, learn_w=0,
                 precision=setup["precision"], n_loops=setup["n_loops"])
    start = time.perf_counter()
    model.fit(x, y, views_ind=views_ind)
    secs = time.perf_counter() - start
    pred = model.decision_function(xt)
    if task["regression"]:
        score = 1.0 - np.sum((yt - pred) ** 2) / np.sum((yt - yt.mean()) ** 2)
    else:
        score = np.mean(np.sign(pred) == np.sign(yt))
    return score, secs


save_results()
print(f"scikit-multimodallearn MVML: λ = {setup['lambda']}, η = {setup['eta']}, "
      f"{setup['n_loops']} loops, learn_A=1, learn_w=0, OPENBLAS_NUM_THREADS="
      f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
print(f"{'task':<22} {'variant':>8} {'p':>6} {'score':>10} {'fit (s)':>10}")
for task in setup["tasks"]:
    if not any(o in task["name"] for o in only):
        continue
    x, y, xt, yt = load(task)
    n = x.shape[0]
    metric = "R²" if task["regression"] else "acc"
    timing = task["name"].startswith("mfeat-time")
    variants = [None, 0.12] if timing else [None] + setup["fractions"]
    for f in variants:
        label = "exact" if f is None else f"{f * 100:.0f}%"
        p = n if f is None else int(np.floor(f * n))
        if variants_only and label not in variants_only:
            continue
        row = {"task": task["name"], "variant": label, "p": p, "metric": metric}
        if (f is None and n > max_exact) or (f is not None and n > max_nystrom):
            print(f"{task['name']:<22} {label:>8} {p:>6}    skipped (n > limit)")
            results.append(dict(row, score=None, fit_s=None, note=f"skipped (n = {n} > limit)"))
            save_results()
            continue
        score, secs = fit_score(task, x, y, xt, yt, 1.0 if f is None else f)
        print(f"{task['name']:<22} {label:>8} {p:>6} {metric:>4} {score:.4f} {secs:>10.3f}", flush=True)
        results.append(dict(row, score=float(score), fit_s=secs))
        save_results()
