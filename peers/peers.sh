#!/usr/bin/env bash
# ovk against its Python peers, in one run on this machine: scikit-learn KernelRidge (krr),
# an OKL reference (the paper's block coordinate descent with scipy's solve_sylvester, written
# in peers/peers.py), scikit-multimodallearn MVML (peers/mvml_peer.py on `cargo bench --bench
# mvml`'s splits), and operalib's OVKRidge when a Python 3.8 can be found (operalib installs
# only with 2019-era numpy/scipy/scikit-learn). Prints a Markdown table of times, ratios
# (peer / ovk) and agreement. Then issue 36's side-by-side rows (peers/end_to_end.py): end to
# end against polars + Nystroem + Ridge on usps, tmc2007 and synthetic 10⁵–10⁶ rows, exact krr
# against KernelRidge and exact okl against one eigh, interleaved, ratios ovk ÷ peer.
#
#   bash peers/peers.sh            # everything (the fit-only ledger: 11 minutes on a quiet
#                                  # 2-core machine; issue 36's rows: about an hour loaded)
#   PEERS_QUICK=1 bash peers/peers.sh   # small sizes only, no MVML (a smoke test)
#   PEERS_ONLY=fits bash peers/peers.sh      # the fit-only ledger alone
#   PEERS_ONLY=issue36 bash peers/peers.sh   # issue 36's rows alone (PEERS_PARTS=real,synthetic,exact
#                                            # picks among them; PEERS_PAIRS=3 pairs per row;
#                                            # PEERS_SIZES=100000,300000 the synthetic rows)
#
# The fit-only ledger runs single-threaded: BLAS pinned to one thread (the faster setting on
# these 2-core machines), faer sequential, and ovk's Gram on one rayon thread. Issue 36's rows
# run with PEERS_THREADS (2) BLAS and polars threads for the peer and ovk's default (every core).
# Knobs: PEERS_DIR (work folder, default a fresh /tmp/ovk-peers.*), PEERS_VENV / OPERALIB_VENV
# (reuse a venv; otherwise throw-away ones are made and deleted), PEER_OKL_MAX_SECONDS (120),
# PEER_OPERALIB_MAX_SECONDS (300 per case), PEER_OPERALIB_MAX_N (2000), PEERS_MVML=0 (skip MVML).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${PEERS_DIR:-$(mktemp -d /tmp/ovk-peers.XXXXXX)}"
mkdir -p "$work"
echo "== machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc --all) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%FT%TZ); load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 RAYON_NUM_THREADS=1
unset OVK_THREADS
quick="${PEERS_QUICK:-}"
only="${PEERS_ONLY:-}"
case "$only" in ""|fits|issue36) ;; *) echo "PEERS_ONLY: '$only' is not fits or issue36" >&2; exit 2 ;; esac
cleanup=()
trap 'for d in "${cleanup[@]:-}"; do [ -n "$d" ] && rm -rf "$d"; done' EXIT

# The same target dir as .ci/run, outside the clone: a run without CARGO_TARGET_DIR reuses
# CI's build instead of starting a fresh one in the repository.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/ovk-target}"
echo "== building ovk (release)" >&2
(cd "$repo" && cargo build --release --quiet)
target="$CARGO_TARGET_DIR"
ovk="$target/release/ovk"

echo "== Python peers venv" >&2
venv="${PEERS_VENV:-}"
if [ -z "$venv" ]; then
  venv="$(mktemp -d /tmp/ovk-peers-venv.XXXXXX)"
  cleanup+=("$venv")
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
pkgs=(numpy scipy scikit-learn threadpoolctl)
[ "$only" = issue36 ] || pkgs+=("scikit-multimodallearn==0.1.0")
[ "$only" = fits ] || pkgs+=(polars)
"$venv/bin/pip" install -q "${pkgs[@]}" \
  >"$work/pip.log" 2>&1 || { echo "pip failed, see $work/pip.log" >&2; tail -5 "$work/pip.log" >&2; exit 1; }

if [ "$only" != issue36 ]; then
echo "== operalib (needs Python 3.8)" >&2
operalib_python=""
py38=""
for c in "${OPERALIB_PYTHON38:-}" "$(command -v python3.8 || true)" \
         "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.8*/bin/python3.8; do
  if [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import venv' 2>/dev/null; then py38="$c"; break; fi
done
if [ -z "$py38" ]; then
  echo "no Python 3.8 found: operalib left out" >&2
else
  ovenv="${OPERALIB_VENV:-}"
  if [ -z "$ovenv" ]; then
    ovenv="$(mktemp -d /tmp/ovk-operalib-venv.XXXXXX)"
    cleanup+=("$ovenv")
  fi
  [ -x "$ovenv/bin/python" ] || "$py38" -m venv "$ovenv"
  # scikit-learn 0.21 has no wheel for 3.8 (and does not build from source here); 0.22.2 is
  # the oldest with one and still has the sklearn.externals.six operalib imports.
  if "$ovenv/bin/pip" install -q "numpy<1.18" "scipy<1.4" "scikit-learn==0.22.2.post1" cython setuptools wheel \
       >"$work/operalib-pip.log" 2>&1 &&
     "$ovenv/bin/pip" install -q --no-build-isolation operalib >>"$work/operalib-pip.log" 2>&1 &&
     "$ovenv/bin/python" -c 'import warnings; warnings.simplefilter("ignore"); import operalib' 2>/dev/null; then
    operalib_python="$ovenv/bin/python"
    echo "operalib $("$ovenv/bin/python" -W ignore -c 'import operalib; print(operalib.__version__)') on $("$py38" --version)" >&2
  else
    echo "operalib did not install (see $work/operalib-pip.log): left out" >&2
    tail -3 "$work/operalib-pip.log" >&2 || true
  fi
fi

mvml_dir=""
if [ -z "$quick" ] && [ "${PEERS_MVML:-1}" != 0 ]; then
  echo "== MVML: ovk side (cargo bench --bench mvml, quick series)" >&2
  export MVML_BENCH_DIR="$work/mvml"
  (cd "$repo" && MVML_BENCH_QUICK=1 cargo bench --quiet --bench mvml) >"$work/mvml-ovk.txt"
  cat "$work/mvml-ovk.txt" >&2
  echo "== MVML: scikit-multimodallearn (single-threaded)" >&2
  # the reference pseudo-inverts the nv×nv matrix every inner step: exact only at n = 200
  PEER_ONLY="${PEER_ONLY:-mfeat-binary,enb-heating,mfeat-time-n200,mfeat-time-n500}" \
  PEER_MAX_EXACT_N="${PEER_MAX_EXACT_N:-200}" PEER_MAX_NYSTROM_N="${PEER_MAX_NYSTROM_N:-750}" \
    "$venv/bin/python" "$here/mvml_peer.py" >"$work/mvml-peer.txt"
  cat "$work/mvml-peer.txt" >&2
  mvml_dir="$MVML_BENCH_DIR"
fi

echo "== ovk vs scikit-learn, operalib, the OKL reference" >&2
"$venv/bin/python" "$here/peers.py" --ovk "$ovk" --work "$work" \
  --operalib-python "$operalib_python" --mvml-dir "$mvml_dir" ${quick:+--quick}
fi

if [ "$only" != fits ]; then
  data="${PEERS_DATA:-${OVK_SHARED_DATA:-$repo/../shared/datasets}}"
  threads="${PEERS_THREADS:-2}"
  echo "== issue 36: end to end and exact rows, $threads threads on both sides" >&2
  # ovk: OVK_THREADS and RAYON_NUM_THREADS unset (end_to_end.py drops them), its default
  OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads" \
  POLARS_MAX_THREADS="$threads" \
    "$venv/bin/python" "$here/end_to_end.py" --ovk "$ovk" --work "$work" --data-dir "$data" \
    --pairs "${PEERS_PAIRS:-3}" --only "${PEERS_PARTS:-}" ${quick:+--quick} \
    ${PEERS_SIZES:+--sizes "$PEERS_SIZES"}
fi
echo "(work files, sessions and peers.json in $work)" >&2
