#!/usr/bin/env bash
# Faults around the store, each compared with a clean run of the same input
# (the JSON report, without the line that says when it was made):
#   1. SIGKILL at random points of an ingest (KILLS times), each followed by a
#      re-run: the report is the clean one.
#   2. Two and three ingests of overlapping inputs into a new store, and two
#      into an existing one, at once: all succeed, the report is the clean one.
#   3. A file truncated while it is read, and one appended to: named, exit 1,
#      nothing of it stored; the file restored (or complete) and ingested
#      again: the clean report. A file cut before the ingest reached it is
#      stored as it was; restored, it replaces its start: the clean report.
#   4. A full disk (a small tmpfs; needs root, skipped with a message
#      otherwise): the ingest fails; with room made, a re-run gives the clean report.
#   5. An unreadable file and directory (as an unprivileged user; skipped
#      without root): named, exit 1, everything else stored; made readable
#      and ingested again: the clean report.
#
# Usage: Scripts/fault-suite.sh [path/to/arrival] (default .build/debug/arrival)
#        KILLS=20 ACTIVITIES=3000 (environment) set the size.
set -uo pipefail
cd "$(dirname "$0")/.."
arrival="$(realpath "${1:-.build/debug/arrival}")"
kills="${KILLS:-20}"
activities="${ACTIVITIES:-3000}"
work="$(mktemp -d /tmp/arrival-faults.XXXXXX)"
chmod 755 "$work"
mounted=""
cleanup() {
    [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
    chmod -R u+rwX "$work" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
passed=0
failed=0
skipped=0
ok() { echo "ok    $1"; passed=$((passed + 1)); }
fail() { echo "FAIL  $1"; failed=$((failed + 1)); }
skip() { echo "skip  $1"; skipped=$((skipped + 1)); }

# report DB: the JSON report without its generation time.
report() { "$arrival" report --db "$1" --format json | grep -v '"generated_at"'; }
# same NAME DB CLEAN: ok when DB's report equals the CLEAN report file.
same() {
    if cmp -s <(report "$2") "$3"; then ok "$1"; else
        fail "$1"
        diff <(report "$2") "$3" | head -10
    fi
}

cd "$work"
"$arrival" simulate --out fleet --activities "$activities" --seed 11 >/dev/null || exit 1
"$arrival" ingest fleet --db clean.sqlite --quiet || exit 1
report clean.sqlite >clean.json

# 1. SIGKILL at random points, then a re-run.
RANDOM=42
survived=0
for trial in $(seq 1 "$kills"); do
    rm -f k.sqlite k.sqlite-wal k.sqlite-shm k.sqlite-journal
    "$arrival" ingest fleet --db k.sqlite --quiet 2>/dev/null &
    pid=$!
    # 0 to 1.2 s: from before the store exists to after the ingest finished.
    sleep "$((RANDOM % 1200 / 1000)).$(printf %03d $((RANDOM % 1000)))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    "$arrival" ingest fleet --db k.sqlite --quiet 2>k.err || { fail "re-run after kill $trial: $(head -2 k.err)"; continue; }
    if cmp -s <(report k.sqlite) clean.json; then survived=$((survived + 1)); else
        fail "kill $trial: report differs from the clean run"
    fi
done
[ "$survived" = "$kills" ] && ok "$kills ingests killed with SIGKILL at random points, each re-run: the clean report"

# 2. Concurrent writers.
for writers in 2 3; do
    for trial in 1 2 3 4 5; do
        rm -f c.sqlite c.sqlite-wal c.sqlite-shm c.sqlite-journal
        pids=()
        for w in $(seq 1 "$writers"); do
            if [ $((w % 2)) = 0 ]; then inputs=(fleet/devices fleet/sender); else inputs=(fleet); fi
            "$arrival" ingest "${inputs[@]}" --db c.sqlite --quiet 2>"c$w.err" &
            pids+=($!)
        done
        codes=""
        for pid in "${pids[@]}"; do wait "$pid"; codes="$codes $?"; done
        if [ "$codes" != "$(printf ' 0%.0s' $(seq 1 "$writers"))" ]; then
            fail "$writers writers into a new store, trial $trial: exits$codes: $(cat c*.err | head -3)"
            continue 2
        fi
        cmp -s <(report c.sqlite) clean.json || { fail "$writers writers, trial $trial: report differs"; continue 2; }
    done
    ok "$writers ingests of overlapping inputs into a new store at once, 5 trials: all exit 0, the clean report"
done
for trial in 1 2 3; do
    rm -f c.sqlite c.sqlite-wal c.sqlite-shm c.sqlite-journal
    "$arrival" ingest fleet/devices --db c.sqlite --quiet
    "$arrival" ingest fleet --db c.sqlite --quiet 2>c1.err &
    p1=$!
    "$arrival" ingest fleet/sender fleet/devices --db c.sqlite --quiet 2>c2.err &
    p2=$!
    wait "$p1"
    r1=$?
    wait "$p2"
    r2=$?
    if [ "$r1$r2" != "00" ]; then fail "2 writers into an existing store: exits $r1 $r2: $(cat c1.err c2.err | head -3)"; break; fi
    cmp -s <(report c.sqlite) clean.json || { fail "2 writers into an existing store: report differs"; break; }
    [ "$trial" = 3 ] && ok "2 ingests of overlapping inputs into an existing store at once, 3 trials: the clean report"
done
# A lock held longer than the wait: said as such.
rm -f c.sqlite c.sqlite-wal c.sqlite-shm c.sqlite-journal
mkdir -p big
for i in 1 2 3 4 5 6; do find fleet/sender -name '*.gz' -exec zcat {} + 2>/dev/null; done | sed 's/"apns_id":"/"apns_id":"x/' >big/sender.jsonl
"$arrival" ingest big --db c.sqlite --quiet &
holder=$!
sleep 0.3
ARRIVAL_BUSY_TIMEOUT_MS=100 "$arrival" ingest fleet/devices --db c.sqlite --quiet 2>busy.err
code=$?
wait "$holder"
if [ "$code" = 1 ] && grep -q "another arrival process is writing the store" busy.err; then
    ok "a lock held longer than the wait: exit 1, 'another arrival process is writing the store'"
else
    fail "a lock held longer than the wait: exit $code, $(head -2 busy.err)"
fi

# 3. A file that changes while it is read. One large plain file, the first read.
mkdir -p changing/a
cp -r fleet/devices changing/b
: >changing/a/sender.jsonl
for f in $(find fleet/sender -name "*.gz" | sort); do zcat "$f" >>changing/a/sender.jsonl 2>/dev/null; done
for i in 1 2 3 4 5; do cat changing/a/sender.jsonl; done >changing/a/big.jsonl
mv changing/a/big.jsonl changing/a/sender.jsonl
cp changing/a/sender.jsonl whole.jsonl
"$arrival" ingest changing --db changed-clean.sqlite --quiet
report changed-clean.sqlite >changed-clean.json
size=$(stat -c %s whole.jsonl)
# wait_open PID: until the process has the large file open (it is read first), so the change lands mid-read.
wait_open() {
    for _ in $(seq 1 1000); do
        ls -l "/proc/$1/fd" 2>/dev/null | grep -q "changing/a/sender.jsonl" && return
        sleep 0.005
    done
}
"$arrival" ingest changing --db t.sqlite --quiet 2>t.err &
pid=$!
wait_open "$pid"
truncate -s $((size / 3)) changing/a/sender.jsonl
wait "$pid"
code=$?
if [ "$code" = 1 ] && grep -q "sender.jsonl" t.err && grep -q "nothing of it was stored" t.err; then
    cp whole.jsonl changing/a/sender.jsonl
    "$arrival" ingest changing --db t.sqlite --quiet && same "a file truncated while read is named (exit 1); restored and ingested again: the clean report" t.sqlite changed-clean.json
else
    fail "a file truncated while read: exit $code, $(head -3 t.err)"
    cp whole.jsonl changing/a/sender.jsonl
fi
# Cut before the ingest reached it, so stored as it was; then restored: the whole file replaces its start.
head -c $((size / 3)) whole.jsonl >changing/a/sender.jsonl
"$arrival" ingest changing --db p.sqlite --quiet 2>p.err
cp whole.jsonl changing/a/sender.jsonl
"$arrival" ingest changing --db p.sqlite --quiet 2>>p.err \
    && same "a file cut before it was read is stored as it was; restored, it replaces its start: the clean report" p.sqlite changed-clean.json
head -c $((size / 2)) whole.jsonl >changing/a/sender.jsonl
"$arrival" ingest changing --db g.sqlite --quiet 2>g.err &
pid=$!
wait_open "$pid"
tail -c +$((size / 2 + 1)) whole.jsonl >>changing/a/sender.jsonl
wait "$pid"
code=$?
if [ "$code" = 1 ] && grep -q "nothing of it was stored" g.err; then
    "$arrival" ingest changing --db g.sqlite --quiet && same "a file appended to while read is named (exit 1); ingested again once complete: the clean report" g.sqlite changed-clean.json
else
    fail "a file appended to while read: exit $code, $(head -3 g.err)"
fi

# 4. A full disk.
if [ "$(id -u)" = 0 ] && mkdir -p disk && mount -t tmpfs -o size=6m tmpfs disk 2>/dev/null; then
    mounted="$work/disk"
    "$arrival" ingest fleet --db disk/s.sqlite --quiet 2>disk.err
    code=$?
    if [ "$code" != 0 ] && grep -qi "disk is full\|full" disk.err; then
        mount -o remount,size=200m "$mounted"
        "$arrival" ingest fleet --db disk/s.sqlite --quiet && same "a full disk fails the ingest (exit $code); with room, a re-run gives the clean report" disk/s.sqlite clean.json
    else
        fail "a full disk: exit $code, $(head -2 disk.err)"
    fi
    umount "$mounted" && mounted=""
else
    skip "a full disk: needs root to mount a small tmpfs"
fi

# 5. Unreadable file and directory, as an unprivileged user.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    cp -r fleet locked
    file=$(find locked/sender -name '*.gz' | sort | head -1)
    dir=$(find locked/devices -mindepth 1 -maxdepth 1 -type d | sort | head -1)
    # The clean run of what stays readable.
    mkdir -p readable && cp -r locked readable/ && rm -rf "readable/$file" "readable/$dir"
    chmod -R a+rwX "$work"
    as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
    as_nobody "$arrival" ingest readable/locked --db "$work/partial-clean.sqlite" --quiet
    report partial-clean.sqlite >partial-clean.json
    chmod 000 "$file" "$dir"
    as_nobody "$arrival" ingest locked --db "$work/u.sqlite" --quiet 2>u.err
    code=$?
    # The readable rest: the paths differ from readable/, so compare the report of what was stored.
    if [ "$code" = 1 ] && grep -q "$(basename "$file")" u.err && grep -q "$(basename "$dir")" u.err \
        && cmp -s <(report u.sqlite) partial-clean.json; then
        ok "an unreadable file and directory are named, exit 1, everything else stored"
    else
        fail "unreadable file and directory: exit $code, $(head -4 u.err)"
        diff <(report u.sqlite) partial-clean.json | head -5
    fi
    chmod 755 "$dir" && chmod 644 "$file"
    as_nobody "$arrival" ingest locked --db "$work/u.sqlite" --quiet && same "made readable and ingested again: the clean report" u.sqlite clean.json
else
    skip "unreadable files and directories: needs root to run as an unprivileged user"
fi

echo "fault suite: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
