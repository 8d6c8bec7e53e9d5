#!/usr/bin/env bash
# End-to-end test of the workbench: drives the real binary in a private tmux server.
# Opens the app on datasets/, opens digits.csv, makes `digit` the class, picks okl, runs,
# checks a key is answered while the fit runs, presses q during the fit (a confirmation must
# show; n keeps the fit), waits for "finished", keeps the run under a name (s), quits, checks
# the session directory and `ovk replay --print` on it, then opens the replay at 80×24: the Run
# pane must count 64 features, its trace table must scroll to its first and last rows, and
# Space must play the trace to its last record.
# Then, at 80×24 on a store of 25 iris runs: the runs table scrolls to its last row, two marked
# runs are drawn in Charts, a λ sweep started with w scores its values and its best is kept;
# σ, λ and input_rank marked with w are searched from Run by random draws and by halving.
# Then every fit is in the store: a fit, r again, a session opened, q — `ovk sessions --json`
# lists both fits, not kept; and an exact fit of 4000 rows cancelled with Esc inside its
# decomposition is recorded as cancelled, its process gone.
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
# `cargo test` passes the binary it built (tests/it/e2e_tui.rs); run by hand, build it here.
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
# runs STORE: how many runs `ovk sessions --json` lists
runs() { "$BIN" sessions --sessions "$1" --json | grep -o '"status":' | wc -l; }
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
send q
wait_for "Quit ovk\?" 10 || fail "q during a fit quit without asking"
send n
sleep 0.3
cap | grep -q "EXITED" && fail "n at the quit question ended the workbench"
cap | grep -q "Quit ovk?" && fail "n did not close the quit question"
if cap | grep -Eq "^ running "; then
    echo "e2e_tui: q during the fit asked; n kept it running"
elif cap | grep -q "finished in"; then
    echo "e2e_tui: q during the fit asked; n kept the workbench (the fit had finished meanwhile)"
else
    fail "after n the fit is neither running nor finished"
fi
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
wait_for "Keep run" 10 || fail "the keep prompt did not open"
send C-u
send -l "e2e-digits"
send Enter
wait_for "kept as" 30 || fail "the run was not kept"
echo "e2e_tui: kept"

# A fit long enough to be interrupted: mvml on mfeat (views from its sidecar). q asks, n keeps
# it running, c cancels it; the saved digits result is then all there is, and q quits at once.
if [ -f "$DATA/mfeat.csv" ]; then
    send 1
    send Escape
    sleep 0.2
    press_until k "> \.\./" 60 || fail "file list not reachable"
    press_until j "> mfeat\.csv" 40 || fail "mfeat.csv not found in the file list"
    send Enter
    wait_for "rows × " 60 || fail "mfeat.csv did not load"
    send 2
    press_until j "> (●|) *mvml" 20 || fail "mvml not in the method list"
    send Enter
    send 4
    wait_for "Enter or r starts the fit" 30 || fail "mvml run configuration refused"
    # q right behind r: keys are handled in order, so the fit has started when q is read,
    # and mvml on mfeat takes well under a second (after a half-second pause it had sometimes
    # finished, and q then quit at once, as it should with nothing running)
    send r
    send q
    wait_for "Quit ovk\?" 10 || fail "q during the mvml fit quit without asking"
    send n
    sleep 0.3
    cap | grep -q "EXITED" && fail "n at the quit question ended the workbench"
    # mvml's optimal A-step may finish within the half second: then n must have left the
    # finished fit on screen, not quit.
    if cap | grep -Eq "^ running "; then
        echo "e2e_tui: q during an mvml fit asked; n kept it running"
        send c
        # the fit may still end between the check and c (about a second on mfeat)
        wait_for "recorded as cancelled|finished in" 60 || fail "cancel was not reported"
        if cap | grep -q "recorded as cancelled"; then
            echo "e2e_tui: the mvml fit was cancelled and recorded as such"
        else
            echo "e2e_tui: note — the mvml fit finished before c reached it (it is recorded)"
        fi
    else
        cap | grep -Eq "finished" || fail "after n the mvml fit is neither running nor finished"
        echo "e2e_tui: note — the mvml fit ended before the check; the key was still answered"
    fi
fi

# Every finished fit is in the store already: q quits at once.
send q
wait_for "EXITED 0" 10 || fail "did not quit cleanly (nothing was running)"

SESSION_JSON=$(grep -l '"e2e-digits"' "$SESS"/*/session.json | head -n 1)
[ -n "$SESSION_JSON" ] || fail "no session named e2e-digits in $SESS"
SESSION_DIR=$(dirname "$SESSION_JSON")
grep -q '"e2e-digits"' "$SESSION_JSON" || fail "session.json lacks the name e2e-digits"
"$BIN" replay --print "$SESSION_DIR" >"$SESS/replay.txt" || fail "ovk replay --print failed"
grep -q "okl" "$SESS/replay.txt" || fail "replay output does not mention okl"
echo "e2e_tui: session read back by ovk replay --print"

# The replay at 80×24: the Run pane counts the session's features, and the trace scrolls.
tm kill-session -t e2e >/dev/null 2>&1 || true
tm new-session -d -x 80 -y 24 -s e2e \
    "cd '$ROOT' && TERM=xterm-256color '$BIN' replay '$SESSION_DIR'; echo \"EXITED \$?\"; sleep 60"
wait_for "REPLAY|replay" 20 || fail "the replay did not open"
send 4
wait_for "64 features" 10 || fail "replay's Run pane does not show 64 features"
N=$(grep -o '"iterations": *[0-9]*' "$SESSION_JSON" | head -n 1 | grep -o '[0-9]*$')
send g
wait_for "Trace \(1/" 10 || fail "the trace table did not scroll to its first row"
send G
wait_for "following" 10 || fail "the trace table did not scroll back to its last row"
LAST=$(cap | grep -Eo "^│[0-9]+ " | tail -n 1 | tr -dc '0-9')
[ -n "$LAST" ] && [ "$LAST" -ge "$((N - 1))" ] || fail "last trace row $LAST, expected about $N"
echo "e2e_tui: replay shows 64 features; its trace scrolls to row 1 and back to the last ($LAST)"
# Played from its first record, the trace stops on its last one, and that frame is drawn.
RECORDS=$(cap | grep -Eo "replay [0-9]+/[0-9]+" | head -n 1 | cut -d/ -f2)
send 5
send g
wait_for "replay 1/$RECORDS" 10 || fail "g in Charts did not rewind the replay"
send Space
wait_for "replay $RECORDS/$RECORDS" 10 || fail "playback did not show its last record ($RECORDS)"
echo "e2e_tui: replay playback reaches its last record ($RECORDS/$RECORDS)"
send q
wait_for "EXITED 0" 10 || fail "replay did not quit cleanly"

# The runs table and a sweep at 80×24, on a store of 25 iris runs made by `ovk run`: the
# table scrolls to its last row, two marked runs are drawn in Charts, a λ sweep started with
# w in the Kernel pane fills its table and curve, and its best is saved like a fit.
if [ -f "$DATA/iris.csv" ]; then
    RUNS="$SESS/runs"
    WORK="$SESS/work"
    mkdir -p "$RUNS" "$WORK"
    cp "$DATA/iris.csv" "$WORK/"
    for i in $(seq -w 1 25); do
        "$BIN" run --sessions "$RUNS" --data "$WORK/iris.csv" --class species --method krr \
            --lambda "0.0$i" --name "iris-$i" >/dev/null 2>&1 || fail "ovk run iris-$i failed"
    done
    LAST_RUN=$("$BIN" sessions --sessions "$RUNS" | tail -n 1 | awk '{print $2}')
    # The new session starts before the old one ends: killing the last session stops the
    # tmux server, and a session started while it stops can fail.
    tm new-session -d -x 80 -y 24 -s runs \
        "cd '$WORK' && TERM=xterm-256color '$BIN' --sessions '$RUNS' '$WORK'; echo \"EXITED \$?\"; sleep 60"
    tm kill-session -t e2e >/dev/null 2>&1 || true
    tm rename-session -t runs e2e
    wait_for "Files" 20 || fail "the workbench did not open on the iris folder"
    send 8
    wait_for "Runs in" 10 || fail "the runs table did not open"
    cap | grep -q "$LAST_RUN" && fail "all 25 runs fit on a 24-line screen: nothing to scroll"
    send G
    wait_for "> +$LAST_RUN" 10 || fail "the runs table did not scroll to its last row ($LAST_RUN)"
    echo "e2e_tui: the runs table of 25 sessions scrolls to its last row ($LAST_RUN)"
    send g
    send Space
    send Space
    send 5
    wait_for "Marked runs \(2\)" 10 || fail "Charts does not draw the two marked runs"
    wait_for "Objective — krr on iris.csv \(runs 1, 2\)" 10 || fail "the marked runs' chart is missing"
    echo "e2e_tui: two marked runs drawn in one chart with a legend"

    send 1
    press_until j "> iris\.csv" 20 || fail "iris.csv not in the file list"
    send Enter
    wait_for "rows × " 30 || fail "iris.csv did not load"
    if ! cap | grep -Eq "class species"; then
        send G
        send c
        wait_for "class species" 10 || fail "could not make species the class"
    fi
    send 3
    wait_for "Kernel & hyperparameters" 10 || fail "Kernel pane did not open"
    press_until j "> lambda " 20 || fail "no lambda field"
    send w
    wait_for "LOW HIGH N" 10 || fail "w did not ask for a sweep range"
    send C-u
    send -l "1e-3 10 5 log cv=3"
    send Enter
    wait_for "marked: λ .λ: 5 values" 10 || fail "Enter at the range did not mark lambda"
    send 4
    send w
    wait_for "Search the marked" 10 || fail "w in Run did not ask how to search"
    send Enter
    wait_for "Sweep of λ — 5/5 scored" 120 || fail "the sweep did not score its 5 values"
    wait_for "finished in" 120 || fail "the best of the sweep was not refitted"
    echo "e2e_tui: a 5-value λ sweep scored by 3-fold CV and its best refitted"
    send 5
    wait_for "Sweep: 3-fold CV accuracy per λ \(5/5" 10 || fail "Charts does not show the sweep's curve"
    send s
    wait_for "Keep run" 10 || fail "keep prompt did not open after the sweep"
    send Enter
    wait_for "kept as" 30 || fail "the sweep's best was not kept"
    N_RUNS=$(runs "$RUNS")
    [ "$N_RUNS" -eq 26 ] || fail "expected 26 runs after the sweep, found $N_RUNS"
    grep -lq '"sweep"' "$RUNS"/*/session.json || fail "the kept sweep session has no sweep table"
    echo "e2e_tui: the sweep's best recorded and kept as a session with its sweep table"

    # σ × λ × input_rank searched from the workbench (issue 31): w marks σ and input_rank
    # beside λ, then w in Run draws 6 random configurations (seeded), then halves 9 draws
    # over the training rows (9 → 3 → 1: 13 evaluations); each ends with its best refitted.
    send 3
    press_until k "> sigma " 20 || fail "no sigma field"
    send w
    wait_for "LOW HIGH N" 10 || fail "w did not ask for sigma's range"
    send C-u
    send -l "0.1 10 3 log"
    send Enter
    wait_for "marked: λ, σ" 10 || fail "sigma was not marked beside lambda"
    press_until j "> input_rank " 20 || fail "no input_rank field"
    send w
    wait_for "LOW HIGH N" 10 || fail "w did not ask for input_rank's range"
    send C-u
    send -l "5 40 3 log"
    send Enter
    wait_for "marked: λ, σ, (r|input_rank)" 10 || fail "input_rank was not marked"
    send 4
    wait_for "marked  λ" 10 || fail "Run does not list the marked fields"
    send w
    wait_for "Search the marked" 10 || fail "w in Run did not ask how to search"
    send C-u
    send -l "random trials=6 seed=3 cv=3"
    send Enter
    wait_for "6/6 scored" 180 || fail "the random search did not score its 6 draws"
    wait_for "finished in" 120 || fail "the random search's best was not refitted"
    echo "e2e_tui: a random search over σ × λ × input_rank scored 6 draws and refitted the best"
    send 5
    wait_for "ranked, best first" 10 || fail "Charts does not rank the search's configurations"
    # e on the chart draws the search as a figure, to a file asked for, never over one unasked.
    send e
    wait_for "Export figure" 10 || fail "e in Charts did not ask for the figure's file"
    send Enter
    wait_for "figure written to|TrueType font" 60 || fail "the figure was not drawn"
    if cap | grep -q "figure written to"; then
        FIG=$(ls "$WORK"/ovk-*-sweep.svg | head -n 1)
        grep -q "<svg" "$FIG" || fail "the figure $FIG is not an SVG"
        BYTES=$(wc -c <"$FIG")
        send e
        wait_for "Export figure" 10 || fail "e did not ask again"
        send Enter
        wait_for "exists: overwrite it" 10 || fail "an existing figure was not asked about"
        send n
        send Enter
        wait_for "nothing written" 10 || fail "n did not keep the existing figure"
        [ "$(wc -c <"$FIG")" -eq "$BYTES" ] || fail "the existing figure changed after n"
        echo "e2e_tui: e in Charts drew the search as $(basename "$FIG"); a second e asked before overwriting"
    fi
    send 4
    send w
    wait_for "Search the marked" 10 || fail "w in Run did not ask how to search again"
    send C-u
    send -l "halving trials=9 factor=3 cv=3"
    send Enter
    wait_for "13/13" 240 || fail "the halving did not make its 13 evaluations"
    wait_for "finished in" 120 || fail "the halving's best was not refitted"
    echo "e2e_tui: successive halving over σ × λ × input_rank made 9 → 3 → 1 evaluations and refitted the best"

    # Every fit is a run in the store the moment it finishes: a fit, r again, a session
    # opened, then q — both fits are listed, not kept.
    N0=$(runs "$RUNS")
    send 4
    wait_for "Enter or r (starts|fits)" 10 || fail "the Run pane is not ready for another fit"
    send r
    for ((t = 0; t < 600 && $(runs "$RUNS") < N0 + 1; t++)); do sleep 0.1; done
    [ "$(runs "$RUNS")" -eq $((N0 + 1)) ] || fail "the first fit was not recorded when it finished"
    send r
    for ((t = 0; t < 600 && $(runs "$RUNS") < N0 + 2; t++)); do sleep 0.1; done
    [ "$(runs "$RUNS")" -eq $((N0 + 2)) ] || fail "r again: the second fit was not recorded"
    send 8
    wait_for "Runs in" 10 || fail "the runs table did not open"
    wait_for "○" 10 || fail "the runs table does not mark runs not kept"
    send g
    send Enter
    wait_for "opened session" 10 || fail "Enter did not open a session"
    send q
    wait_for "EXITED 0" 10 || fail "q after a fit, r and an opened session did not quit at once"
    [ "$(runs "$RUNS")" -eq $((N0 + 2)) ] || fail "runs were lost on the way out"
    UNKEPT=$("$BIN" sessions --sessions "$RUNS" --json | grep -o '"kept": *false' | wc -l)
    [ "$UNKEPT" -ge 2 ] || fail "the two fits are not listed as not kept ($UNKEPT)"
    echo "e2e_tui: a fit, r, an opened session, q: all $((N0 + 2)) runs in the store, $UNKEPT not kept"

    # Cancel means stop: an exact fit of 4000 rows (auto takes the exact route), Esc inside
    # its decomposition; the run is recorded as cancelled and no ovk worker is left running.
    awk 'BEGIN { srand(3); print "x0,x1,x2,x3,x4,y0,y1";
        for (i = 0; i < 4000; i++) { a = rand(); b = rand(); c = rand(); d = rand(); e = rand();
            printf "%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f\n", a, b, c, d, e, sin(6*a) + b*c, d - e } }' \
        >"$WORK/big.csv"
    printf 'source = "e2e_tui.sh"\ntask = "regression"\ntargets = ["y0", "y1"]\n' >"$WORK/big.toml"
    tm new-session -d -x 120 -y 36 -s big \
        "cd '$WORK' && TERM=xterm-256color '$BIN' --sessions '$RUNS' '$WORK/big.csv'; echo \"EXITED \$?\"; sleep 60"
    tm kill-session -t e2e >/dev/null 2>&1 || true
    tm rename-session -t big e2e
    wait_for "rows × " 30 || fail "big.csv did not load"
    send 4
    wait_for "Enter or r starts the fit" 30 || fail "the big fit's configuration was refused"
    BEFORE=$(runs "$RUNS")
    send r
    wait_for "decomposition [~·]|decomposition ~" 120 || fail "the big fit never reached its decomposition"
    WORKER=$(pgrep -f "ovk fit-worker|release/ovk fit-worker|fit-worker" | head -n 1 || true)
    send Escape
    wait_for "recorded as cancelled" 10 || fail "the cancelled fit was not recorded as cancelled"
    if [ -n "$WORKER" ]; then
        sleep 0.2
        [ -e "/proc/$WORKER" ] && fail "the fit's worker process $WORKER still runs after the cancel"
    fi
    [ "$(runs "$RUNS")" -eq $((BEFORE + 1)) ] || fail "the cancelled fit is not in the store"
    "$BIN" sessions --sessions "$RUNS" --json | grep -q '"status": *"cancelled"' \
        || fail "ovk sessions does not list the run as cancelled"
    echo "e2e_tui: an exact fit cancelled in its decomposition: recorded as cancelled, its process gone"
    cap >"$SESS/cancelled-screen.txt"
    send q
    wait_for "EXITED 0" 10 || fail "did not quit cleanly after the cancel"
fi
echo "e2e_tui: PASS (session $SESSION_DIR)"
