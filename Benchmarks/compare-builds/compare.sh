#!/usr/bin/env bash
# Compares two arrival binaries on the four measurements of the 70k-fleet baseline,
# interleaved A, B, A, B, ... N times, and prints per measurement the median wall time
# of A and of B, the ratio B/A (also as the median of per-round ratios), the median
# user+sys CPU and the median peak RSS of each.
#
#   compare.sh A B [N=9]          e.g. compare.sh /tmp/arrival-old .build/release/arrival 9
#
# Measurements (see bench-lib.sh; DATA, STORE, DAY, SCRATCH can be overridden from the environment):
#   sender_ingest  arrival ingest $DATA/sender --db $SCRATCH/b-sender.sqlite --quiet   (new store each run)
#   fleet_ingest   arrival ingest $DATA        --db $SCRATCH/b-all.sqlite    --quiet   (new store each run)
#   report_json    arrival report --db $STORE --format json --out /dev/null
#   report_html    arrival report --db $STORE --day $DAY --days 7 --format html --out /dev/null
# Both binaries read the same $STORE, so the reports compare like for like.
# Each run waits for an idle machine and is redone (up to RETRIES) when something else used CPU
# during it; see bench-lib.sh. Raw runs (with the CPU seconds the rest of the machine used)
# go to $RAW (default: a temp file, path printed).
# Even on an idle machine single runs of one binary vary by up to ~30 % here (the VM's CPU speed
# varies: user time moves too): with 5 % as the bar, use N >= 9 and repeat the comparison.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
if [ $# -lt 2 ]; then sed -n '2,19p' "$0"; exit 2; fi
a=$(readlink -f "$1"); b=$(readlink -f "$2"); n=${3:-9}
for x in "$a" "$b"; do [ -x "$x" ] || { echo "not an executable: $x" >&2; exit 2; }; done
[ -d "$DATA" ] && [ -f "$STORE" ] || { echo "missing $DATA or $STORE" >&2; exit 2; }
raw=${RAW:-$(mktemp /tmp/compare-raw.XXXXXX)}
: > "$raw"
echo "A: $a (sha256 $(sha256sum "$a" | cut -c1-16))"
echo "B: $b (sha256 $(sha256sum "$b" | cut -c1-16))"
echo "data: $DATA; report store: $STORE; day $DAY; $n interleaved rounds; raw runs: $raw"
echo "# side measurement round wall_s user_s sys_s maxrss_kb exit other_cpu_s attempts" >> "$raw"
failures=0
for round in $(seq "$n"); do
    for m in "${MEASUREMENTS[@]}"; do
        for side in A B; do
            [ $side = A ] && bin=$a || bin=$b
            r=$(run_clean "$bin" "$m"); die_if_devnull_gone
            echo "$side $m $round $r" >> "$raw"
            [ "$(echo "$r" | cut -d" " -f5)" = 0 ] || failures=$((failures + 1))
        done
    done
    echo "round $round/$n done" >&2
done
med() { awk -v s=$1 -v m=$2 -v c=$3 '$1==s && $2==m {print $c}' "$raw" | median; }
cpu() { awk -v s=$1 -v m=$2 '$1==s && $2==m {print $5+$6}' "$raw" | median; }
# Median over rounds of B/A within the same round: less moved by slow drift of the machine than the ratio of medians.
paired() { awk -v m=$1 '$2==m && $1=="A" {a[$3]=$4} $2==m && $1=="B" {b[$3]=$4} END {for (r in a) if ((r in b) && a[r]>0) printf "%.4f\n", b[r]/a[r]}' "$raw" | median; }
# (max - min) / median of one side's wall times, in %: the run-to-run noise the ratios have to beat.
spread() { awk -v s=$1 -v m=$2 '$1==s && $2==m {print $4}' "$raw" | sort -g | awk '{a[NR]=$1} END {if (NR<2) {printf "-"; exit} med=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f%%", 100*(a[NR]-a[1])/med}'; }
ratio() { awk -v a=$1 -v b=$2 'BEGIN{if (a>0) printf "%.3f", b/a; else printf "NA"}'; }
printf "\n%-14s %8s %8s %7s %9s %9s | %7s %7s %7s | %11s %11s %7s\n" measurement A_wall_s B_wall_s B/A paired_B/A spread_A/B A_cpu_s B_cpu_s B/A A_maxrss_kb B_maxrss_kb B/A
for m in "${MEASUREMENTS[@]}"; do
    wa=$(med A $m 4); wb=$(med B $m 4); ca=$(cpu A $m); cb=$(cpu B $m); ra=$(med A $m 7); rb=$(med B $m 7)
    printf "%-14s %8s %8s %7s %9s %9s | %7s %7s %7s | %11s %11s %7s\n" "$m" "$wa" "$wb" "$(ratio $wa $wb)" \
        "$(paired $m | awk '{printf "%.3f", $1}')" "$(spread A $m)/$(spread B $m)" "$ca" "$cb" "$(ratio $ca $cb)" "$ra" "$rb" "$(ratio $ra $rb)"
done
echo "(wall and max RSS: medians over $n runs; cpu = user+sys, median; paired_B/A: median of per-round B/A;"
echo " spread: (max-min)/median of each side's wall times. A=B runs on this VM differ by up to ~30 % even when"
echo " nothing else runs (the CPU itself varies: user time moves too), so a 5 % verdict needs N >= 9 and a ratio"
echo " that holds when the comparison is repeated)"
noisy=$(awk 'NR>1 && $10 ~ /!/' "$raw" | wc -l)
echo "runs disturbed by other CPU use on every attempt: $noisy of $(( $(wc -l < "$raw") - 1 )); redone runs: $(awk 'NR>1 && $10+0>1' "$raw" | wc -l) (see $raw)"
if [ "$failures" -gt 0 ]; then echo "WARNING: $failures runs exited non-zero (see $raw and the warnings above)"; exit 1; fi
