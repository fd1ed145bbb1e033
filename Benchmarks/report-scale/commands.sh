# Sourced by run.sh and compare.sh: the two reports they time.
# report_args FORMAT DB: sets `args` to arrival's arguments for FORMAT (json: the whole store's JSON
# report; html: the page of 2026-11-21 with a 7-day trend) over the store DB.
report_args() {
    if [ "$1" = json ]; then
        args=(report --db "$2" --format json)
    else
        args=(report --db "$2" --day 2026-11-21 --days 7 --format html)
    fi
}
