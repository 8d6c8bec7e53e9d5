#!/usr/bin/env bash
# End-to-end test of the workbench: drives the real binary in a private tmux server.
# Opens the app on datasets/, opens digits.csv, makes `digit` the class, picks okl, runs,
# checks a key is answered while the fit runs, waits for "finished", saves the session under
# a name, quits, and checks the session directory and `ovk replay --print` on it.
#
#   tests/e2e_tui.sh            (uses $OVK_BIN, else builds in release under $CARGO_TARGET_DIR)
#
# Exits 0 with a message when tmux is not installed.
set -euo pipefail

if ! command -v tmux >/dev/null 2>&1; then
    echo "e2e_tui: tmux is not installed — skipped"
    exit 0
fi

cd "$(dirname "$0")/.."
ROOT=$PWD
# `cargo test` passes the binary it built (tests/e2e_tui.rs); run by hand, build it here.
if [ -n "${OVK_BIN:-}" ]; then
    BIN=$OVK_BIN
else
    TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
    cargo build --release --quiet --bin ovk
    BIN=$TARGET/release/ovk
fi
[ -x "$BIN" ] || { echo "e2e_tui: no binary at $BIN"; exit 1; }

# The bundled datasets/, else $OVK_SHARED_DATA, else ../shared/datasets (beside the clone).
DATA=
for d in datasets "${OVK_SHARED_DATA:-}" ../shared/datasets; do
    if [ -n "$d" ] && [ -f "$d/digits.csv" ]; then DATA=$d; break; fi
done
[ -n "$DATA" ] || { echo "e2e_tui: digits.csv not found (datasets/, \$OVK_SHARED_DATA, ../shared/datasets)"; exit 1; }

SESS=$(mktemp -d)
SOCK="ovk-e2e-$$"
tm() { tmux -L "$SOCK" "$@"; }
cleanup() { tm kill-server >/dev/null 2>&1 || true; rm -rf "$SESS"; }
trap cleanup EXIT

cap() { tm capture-pane -p -t e2e; }
send() { tm send-keys -t e2e "$@"; }
fail() {
    echo "e2e_tui: FAIL — $*"
    echo "----- screen -----"
    cap || true
    exit 1
}
# wait_for REGEX SECONDS
wait_for() {
    local pat=$1 secs=$2 i
    for ((i = 0; i < secs * 10; i++)); do
        if cap | grep -Eq -- "$pat"; then return 0; fi
        sleep 0.1
    done
    return 1
}
# press KEY until REGEX is on screen (at most N presses)
press_until() {
    local key=$1 pat=$2 n=$3 i
    for ((i = 0; i < n; i++)); do
        if cap | grep -Eq -- "$pat"; then return 0; fi
        send "$key"
        sleep 0.15
    done
    cap | grep -Eq -- "$pat"
}

tm new-session -d -x 160 -y 48 -s e2e \
    "cd '$ROOT' && TERM=xterm-256color '$BIN' --sessions '$SESS' '$DATA'; echo \"EXITED \$?\"; sleep 60"

wait_for "Files" 20 || fail "the workbench did not open"
echo "e2e_tui: opened on $DATA"

press_until j "> digits\.csv" 40 || fail "digits.csv not found in the file list"
send Enter
wait_for "rows × " 60 || fail "digits.csv did not load"
echo "e2e_tui: digits.csv loaded"

if ! cap | grep -Eq "class digit"; then
    send G
    sleep 0.2
    press_until k "> digit " 80 || fail "column digit not selectable"
    send c
    wait_for "class digit" 10 || fail "could not make digit the class"
fi
echo "e2e_tui: class column is digit"

send 2
wait_for "Methods" 10 || fail "Method pane did not open"
press_until j "> (●|) *okl" 20 || fail "okl not in the method list"
send Enter
wait_for "Kernel & hyperparameters of okl" 10 || fail "okl's hyperparameters not shown"
echo "e2e_tui: method okl chosen"

send 4
wait_for "Enter or r starts the fit" 30 || fail "run configuration refused"
send r
sleep 0.3
send 5
if wait_for "Objective" 5; then
    if cap | grep -Eq " running "; then
        echo "e2e_tui: key answered while the fit runs (Charts shown, status running)"
    else
        echo "e2e_tui: note — the fit ended before the check; the key was still answered"
    fi
else
    fail "pane switch (5) not answered during the fit"
fi

for ((t = 0; t < 6000; t++)); do
    screen=$(cap)
    if grep -q "finished in" <<<"$screen"; then break; fi
    if grep -Eq "^ (failed|cancelled) " <<<"$screen"; then fail "the fit did not finish"; fi
    sleep 0.1
done
cap | grep -q "finished in" || fail "no 'finished' within 10 minutes"
echo "e2e_tui: fit finished"

send s
wait_for "Save session" 10 || fail "save prompt did not open"
send C-u
send -l "e2e-digits"
send Enter
wait_for "saved to" 30 || fail "session not saved"
echo "e2e_tui: saved"

send q
wait_for "EXITED 0" 10 || fail "did not quit cleanly"

SESSION_JSON=$(find "$SESS" -mindepth 2 -maxdepth 2 -name session.json | head -n 1)
[ -n "$SESSION_JSON" ] || fail "no session directory with session.json in $SESS"
SESSION_DIR=$(dirname "$SESSION_JSON")
grep -q '"e2e-digits"' "$SESSION_JSON" || fail "session.json lacks the name e2e-digits"
"$BIN" replay --print "$SESSION_DIR" >"$SESS/replay.txt" || fail "ovk replay --print failed"
grep -q "okl" "$SESS/replay.txt" || fail "replay output does not mention okl"
echo "e2e_tui: PASS (session $SESSION_DIR read back by ovk replay --print)"
