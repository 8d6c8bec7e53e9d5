"""operalib's OVKRidge on the cases peers/peers.py hands it (Python 3.8 venv: operalib needs
2019-era numpy/scipy/scikit-learn). The decomposable Gaussian kernel k(x, z)·A with A = I is the
model of ovk's `krr`: operalib minimises ‖Gc − y‖²/(2np) + λ cᵀGc/(2np) with L-BFGS-B, whose
minimiser is c = (G + λI)⁻¹ y, as in ovk.

Usage: python operalib_peer.py JOBS.json OUT.json — OUT.json is rewritten after each case, so
a run cut short by the caller's time cap keeps what it finished."""

import json
import sys
import time
import warnings

import numpy as np

warnings.simplefilter("ignore")
import operalib  # noqa: E402


def main():
    jobs = json.load(open(sys.argv[1]))
    out = []
    for job in jobs:
        data = np.loadtxt(job["data"], delimiter=",", skiprows=1)
        head = open(job["data"]).readline().strip().split(",")
        xcols = [i for i, h in enumerate(head) if h.startswith("x_")]
        ycols = [i for i, h in enumerate(head) if h.startswith("y_")]
        tr, te = job["train"], job["test"]
        x, y = data[:, xcols], data[:, ycols]
        mu, sd = x[tr].mean(axis=0), x[tr].std(axis=0)
        sd[sd == 0] = 1.0
        xtr, xte = (x[tr] - mu) / sd, (x[te] - mu) / sd
        sigma = job["sigma"]
        model = operalib.OVKRidge("DGauss", lbda=job["lam"], gamma=1.0 / (2 * sigma * sigma))
        start = time.perf_counter()
        model.fit(xtr, y[tr])
        secs = time.perf_counter() - start
        pred = model.predict(xte)
        diff = float(np.max(np.abs(pred - np.load(job["ovk_pred"]))))
        res = model.solver_res_
        msg = res.message.decode() if isinstance(res.message, bytes) else str(res.message)
        out.append({
            "case": job["case"],
            "peer": "operalib %s OVKRidge (DGauss, A = I, L-BFGS-B)" % operalib.__version__,
            "fit_s": secs,
            "agreement": "max abs Δŷ = %.1e; %d L-BFGS-B iterations, %s" % (
                diff, res.nit, "converged" if res.success else "stopped: %s" % msg),
        })
        json.dump(out, open(sys.argv[2], "w"))
        print("done: operalib %s" % job["case"], file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
