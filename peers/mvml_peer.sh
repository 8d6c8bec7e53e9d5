#!/usr/bin/env bash
# Compare ovk's mvml with scikit-multimodallearn 0.1.0 (PyPI) on the same splits.
# 1. `cargo bench --bench mvml` writes the splits/hyperparameters to $MVML_BENCH_DIR.
# 2. This script makes a throw-away venv, installs the reference, and runs peers/mvml_peer.py
#    single-threaded. PEER_MAX_EXACT_N (default 500) and PEER_MAX_NYSTROM_N (1000) skip slow
#    reference fits; PEER_ONLY=<substrings,…> runs only matching tasks (e.g. mfeat-time),
#    PEER_VARIANTS=exact,12% only those variants. peers/peers.sh runs this too, inside its table.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
export MVML_BENCH_DIR="${MVML_BENCH_DIR:-/tmp/ovk_mvml_bench}"
if [ ! -f "$MVML_BENCH_DIR/setup.json" ]; then
  echo "no $MVML_BENCH_DIR/setup.json: run 'cargo bench --bench mvml' first" >&2
  exit 1
fi
venv="$(mktemp -d /tmp/mvml_peer_venv.XXXXXX)"
trap 'rm -rf "$venv"' EXIT
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
  echo "skipping the peer benchmark: python3 -m venv failed (install python3-venv)" >&2
  exit 0
fi
if ! "$venv/bin/pip" install -q numpy scipy scikit-learn "scikit-multimodallearn==0.1.0" >"$venv/pip.log" 2>&1; then
  echo "skipping the peer benchmark: pip could not install scikit-multimodallearn (see below)" >&2
  tail -5 "$venv/pip.log" >&2
  exit 0
fi
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$venv/bin/python" "$here/mvml_peer.py"
