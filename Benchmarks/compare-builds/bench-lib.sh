# Shared by compare.sh: the four arrival measurements on the 70k fleet.
# Source it; needs /usr/bin/time (Debian: time).
DATA=${DATA:-/tmp/arrival-fleet70k}          # written once by: arrival simulate --out $DATA --activities 70000 --seed 42
STORE=${STORE:-/tmp/arrival-fleet70k.sqlite}  # ingest of $DATA (by the newer binary, so both can read it), read by the two reports
DAY=${DAY:-2026-11-21}                            # simulate's default --day
SCRATCH=${SCRATCH:-/tmp}
MEASUREMENTS=(sender_ingest fleet_ingest report_json report_html)

rm_store() { rm -f "$1" "$1-wal" "$1-shm" "$1-journal"; }

# Busy CPU seconds of the whole machine so far (user+nice+system+irq+softirq+steal, /proc/stat in USER_HZ=100).
busy_cpu() { awk '$1=="cpu"{printf "%.2f\n", ($2+$3+$4+$7+$8+$9)/100}' /proc/stat; }

# run_one BIN MEASUREMENT -> prints "wall user sys maxrss_kb exit_code other_cpu_s"
# other_cpu_s: CPU seconds the rest of the machine used during the run (busy CPU minus the run's user+sys);
# well above ~0.3 s means something else competed for the 2 cores and the run is suspect.
run_one() {
    local bin=$1 m=$2 t rc c0 c1
    t=$(mktemp)
    c0=$(busy_cpu)
    case $m in
        sender_ingest)
            rm_store "$SCRATCH/b-sender.sqlite"
            /usr/bin/time -f "%e %U %S %M" -o "$t" "$bin" ingest "$DATA/sender" --db "$SCRATCH/b-sender.sqlite" --quiet >/dev/null 2>"$t.err"; rc=$?
            rm_store "$SCRATCH/b-sender.sqlite" ;;
        fleet_ingest)
            rm_store "$SCRATCH/b-all.sqlite"
            /usr/bin/time -f "%e %U %S %M" -o "$t" "$bin" ingest "$DATA" --db "$SCRATCH/b-all.sqlite" --quiet >/dev/null 2>"$t.err"; rc=$?
            rm_store "$SCRATCH/b-all.sqlite" ;;
        report_json)
            /usr/bin/time -f "%e %U %S %M" -o "$t" "$bin" report --db "$STORE" --format json --out /dev/null >/dev/null 2>"$t.err"; rc=$? ;;
        report_html)
            /usr/bin/time -f "%e %U %S %M" -o "$t" "$bin" report --db "$STORE" --day "$DAY" --days 7 --format html --out /dev/null >/dev/null 2>"$t.err"; rc=$? ;;
        *) echo "unknown measurement $m" >&2; return 2 ;;
    esac
    c1=$(busy_cpu)
    # A binary that replaced /dev/null (e.g. an atomic write via rename, as root) would corrupt every later run.
    if [ ! -c /dev/null ]; then
        echo "FATAL: /dev/null is no longer a character device after $bin $m; restore it: rm -f /dev/null; mknod -m 666 /dev/null c 1 3" >&2
        return 3
    fi
    if [ "$rc" -ne 0 ]; then
        echo "WARNING: $bin $m exited $rc: $(head -c 400 "$t.err")" >&2
    fi
    # time's file holds "Command exited with non-zero status N" before the numbers when rc != 0: keep the last line.
    echo "$(tail -1 "$t") $rc $(tail -1 "$t" | awk -v c0=$c0 -v c1=$c1 '{o=c1-c0-$2-$3; printf "%.2f", (o<0)?0:o}')"
    rm -f "$t" "$t.err"
}

# Callers: r=$(run_one ...); die_if_devnull_gone — run_one runs in a subshell, so it cannot stop the script itself.
die_if_devnull_gone() { [ -c /dev/null ] || { echo "stopping: /dev/null was replaced" >&2; exit 3; }; }

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "NA"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# The machine is shared (a concurrent swift build takes both cores), so each run waits for an idle
# machine first and is redone when something else still competed during it.
IDLE_WAIT=${IDLE_WAIT:-180}   # seconds to wait for an idle machine before running anyway
RETRIES=${RETRIES:-3}         # attempts per run when others used CPU during it
# Allowed foreign CPU during a run: OTHER_BASE s plus OTHER_FRAC of the wall time
# (an idle machine still does some kernel writeback for the ingests).
OTHER_BASE=${OTHER_BASE:-0.3}
OTHER_FRAC=${OTHER_FRAC:-0.05}
LOCK=${LOCK:-/tmp/arrival-bench.lock}

# wait_idle: returns once the machine used < 0.05 CPU s in each of two consecutive 1-s samples, or after IDLE_WAIT s.
wait_idle() {
    local deadline=$((SECONDS + IDLE_WAIT)) c0 c1 quiet=0
    while ((SECONDS < deadline)); do
        c0=$(busy_cpu); sleep 1; c1=$(busy_cpu)
        if awk -v a=$c0 -v b=$c1 'BEGIN{exit !(b-a < 0.05)}'; then quiet=$((quiet + 1)); else quiet=0; fi
        ((quiet >= 2)) && return 0
    done
    echo "note: machine not idle after ${IDLE_WAIT}s, running anyway" >&2
    return 1
}

# run_clean BIN MEASUREMENT -> like run_one, plus a 7th field: attempts used (suffixed ! when every attempt was disturbed).
run_clean() {
    local bin=$1 m=$2 r attempt
    for attempt in $(seq "$RETRIES"); do
        # One run at a time across every measure.sh/compare.sh on the machine (they share the scratch stores).
        r=$( { flock 9; wait_idle; run_one "$bin" "$m"; } 9>>"$LOCK" ) || { echo "$r"; return 3; }
        if echo "$r" | awk -v b=$OTHER_BASE -v f=$OTHER_FRAC '{exit !($6 <= b + f * $1)}'; then
            echo "$r $attempt"; return 0
        fi
        echo "note: $m with $(basename "$bin") disturbed (others used $(echo "$r" | cut -d' ' -f6) CPU s), attempt $attempt/$RETRIES" >&2
    done
    echo "$r ${RETRIES}!"
}
