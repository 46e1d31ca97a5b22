# Shared pieces of the OSU-style scripts: sourced by them, never run on its own.
# The sourcing script sets BENCH_SCRIPT (its name in messages) first.

# The running script's header comment, as its usage text.
bench_usage() {
    sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
}

# bench_start MAX_ARGS "$@": the usage text on -h or unless there are 1 to MAX_ARGS arguments;
# sets BUILD_DIR from the first, which must be a folder.
bench_start() {
    local max=$1
    shift
    if [ $# -lt 1 ] || [ $# -gt "$max" ]; then bench_usage; fi
    case "$1" in -h|--help) bench_usage ;; esac
    if [ ! -d "$1" ]; then
        echo "$BENCH_SCRIPT: build directory '$1' does not exist" >&2
        exit 2
    fi
    BUILD_DIR=$(cd "$1" && pwd)
}

# bench_count NAME VALUE: exit 2 unless VALUE is a whole number of at least 1.
bench_count() {
    case "$2" in
        ''|*[!0-9]*) echo "$BENCH_SCRIPT: $1 must be a positive integer, got '$2'" >&2; exit 2 ;;
    esac
    if [ "$2" -lt 1 ]; then
        echo "$BENCH_SCRIPT: $1 must be at least 1" >&2
        exit 2
    fi
}

# The OSU-style programs in run order. The point-to-point ones always run on 2 ranks.
PT2PT_PROGS=(osu_latency osu_bw osu_bibw)
COLL_PROGS=(osu_allreduce osu_barrier osu_bcast osu_reduce osu_allgather osu_alltoall
            osu_iallreduce)
is_pt2pt() {
    local p
    for p in "${PT2PT_PROGS[@]}"; do [ "$p" = "$1" ] && return 0; done
    return 1
}

# Sets EXTRA (BENCH_ARGS) and PROGS: every program, or those BENCH_PROGS names; a layout option
# in BENCH_ARGS (-t) leaves the collective programs out, as they have no -t.
bench_select_programs() {
    read -r -a EXTRA <<< "${BENCH_ARGS:-}"
    PROGS=("${PT2PT_PROGS[@]}" "${COLL_PROGS[@]}")
    if [ -n "${BENCH_PROGS:-}" ]; then
        local w
        read -r -a WANT <<< "$BENCH_PROGS"
        for w in "${WANT[@]}"; do
            case " ${PROGS[*]} " in
                *" $w "*) ;;
                *) echo "$BENCH_SCRIPT: unknown program '$w' in BENCH_PROGS (known: ${PROGS[*]})" >&2
                   exit 2 ;;
            esac
        done
        PROGS=("${WANT[@]}")
    fi
    local arg p
    for arg in "${EXTRA[@]}"; do
        case "$arg" in
            -t*) local sel=()
                 for p in "${PROGS[@]}"; do is_pt2pt "$p" && sel+=("$p"); done
                 PROGS=("${sel[@]}")
                 echo "# BENCH_ARGS selects a message layout: the collective programs are left out" ;;
        esac
    done
}

# bench_launch_setup TOOL...: exit 1 unless every TOOL is found; allow mpirun as root; set
# TIMEOUT_CMD to bound each run by BENCH_TIMEOUT seconds (default 600) where `timeout` exists.
bench_launch_setup() {
    local tool
    for tool in "$@"; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "$BENCH_SCRIPT: '$tool' not found" >&2
            exit 1
        fi
    done
    if [ "$(id -u)" -eq 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    TIMEOUT=${BENCH_TIMEOUT:-600}
    TIMEOUT_CMD=()
    if command -v timeout >/dev/null 2>&1; then
        TIMEOUT_CMD=(timeout -k 10 "$TIMEOUT")
    fi
}

# bench_ompi_setup NAME "SOURCE..." PROG...: the output folders BUILD_DIR/NAME/{ompi,raw}
# (OUT, OMPI_BIN, RAW, RESULTS=OUT/results.csv), and each PROG built from PROG.c and the
# SOURCEs with $MPICC -O2 into OMPI_BIN; OMPI_OK[PROG] is set for those that built, and
# status becomes 1 if any did not.
declare -A OMPI_OK=()
bench_ompi_setup() {
    OUT=$BUILD_DIR/$1
    OMPI_BIN=$OUT/ompi
    RAW=$OUT/raw
    RESULTS=$OUT/results.csv
    mkdir -p "$OMPI_BIN" "$RAW" || exit 1
    local sources=() src prog dir
    dir=$(dirname "${BASH_SOURCE[0]}")
    for src in $2; do sources+=("$dir/$src"); done
    shift 2
    echo "# building Open MPI binaries with $MPICC -O2 into $OMPI_BIN"
    for prog in "$@"; do
        [ -n "${OMPI_OK[$prog]:-}" ] && continue
        if "$MPICC" -O2 -std=c11 -o "$OMPI_BIN/$prog" "$dir/$prog.c" "${sources[@]}"; then
            OMPI_OK[$prog]=1
        else
            echo "$BENCH_SCRIPT: building $prog against Open MPI failed" >&2
            status=1
        fi
    done
}

# awk: the median of a space-separated list of numbers.
BENCH_AWK_MEDIAN='
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}'

# awk program: from lines "W SIZE VALUE" (weft) and "O SIZE VALUE" (Open MPI), any number per
# size, a table by increasing size of each side's median and, with -v ratio=1, the ratio
# weft/open-mpi and its geometric mean; with -v results=FILE and -v name=NAME, the rows
# NAME,size,weft,ompi,ratio are appended to FILE.
BENCH_AWK_TABLE="$BENCH_AWK_MEDIAN"'
{
    if (!(($2) in seen)) { seen[$2] = 1; order[n++] = $2 + 0 }
    if ($1 == "W") w[$2] = w[$2] " " $3; else o[$2] = o[$2] " " $3
}
END {
    for (i = 1; i < n; i++) {
        v = order[i]
        for (j = i - 1; j >= 0 && order[j] > v; j--) order[j + 1] = order[j]
        order[j + 1] = v
    }
    rule = "--------------"
    if (ratio) {
        printf "%-10s | %14s | %14s | %8s\n", "size", "weft", "open-mpi", "ratio"
        printf "%-10s-+-%14s-+-%14s-+-%8s\n", "----------", rule, rule, "--------"
    } else {
        printf "%-10s | %14s | %14s\n", "size", "weft", "open-mpi"
        printf "%-10s-+-%14s-+-%14s\n", "----------", rule, rule
    }
    logsum = 0; nr = 0
    for (i = 0; i < n; i++) {
        s = order[i] ""
        wv = (s in w) ? sprintf("%.2f", median(w[s])) : ""
        ov = (s in o) ? sprintf("%.2f", median(o[s])) : ""
        if (!ratio) {
            printf "%-10s | %14s | %14s\n", s, (wv == "" ? "-" : wv), (ov == "" ? "-" : ov)
            continue
        }
        r = ""
        if (wv != "" && ov != "" && ov + 0 > 0 && wv + 0 > 0) {
            r = sprintf("%.2f", wv / ov)
            logsum += log(wv / ov); nr++
        }
        printf "%-10s | %14s | %14s | %8s\n", s, (wv == "" ? "-" : wv),
               (ov == "" ? "-" : ov), (r == "" ? "-" : r)
        if (results != "") printf "%s,%s,%s,%s,%s\n", name, s, wv, ov, r >> results
    }
    if (n == 0)
        print "(no results)"
    else if (nr > 0)
        printf "%-10s | %14s | %14s | %8.2f\n", "geomean", "", "", exp(logsum / nr)
}'

# bench_rows TAG FIELD CSV...: "TAG SIZE VALUE" for every numeric row of the CSV files, VALUE
# being the row's FIELD-th field.
bench_rows() {
    local tag=$1 field=$2
    shift 2
    awk -F, -v tag="$tag" -v f="$field" '
        /^[0-9]+,/ && $f ~ /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ { print tag, $1, $f }' "$@"
}

# bench_one LABEL NP SIZE FILE ARG...: runs `$MPIRUN --oversubscribe --bind-to $bind -np NP ARG...
# --csv -m SIZE:SIZE` (ARG...: mpirun options, then the program) for at most 300 s, its stderr
# appended to $out/errors.log, and appends the value it prints for SIZE to FILE; without one,
# reports LABEL as failed and sets status to 1.
bench_one() {
    local label=$1 np=$2 size=$3 file=$4
    shift 4
    local v b=$bind
    # Binding to cores needs a core per rank.
    [ "$b" = core ] && [ "$(nproc)" -lt "$np" ] && b=none
    v=$(timeout 300 "$MPIRUN" --oversubscribe --bind-to "$b" -np "$np" "$@" --csv -m "$size:$size" \
          </dev/null 2>>"$out/errors.log" | awk -F, -v s="$size" '$1 == s { print $2 }')
    if [ -z "$v" ]; then
        echo "$BENCH_SCRIPT: $label failed (see $out/errors.log)" >&2
        status=1
        return
    fi
    echo "$v" >> "$file"
}

# Plots: scripts/plots/weft_plot.py under the first python3 that has matplotlib: PATH's, then
# Debian's (python3-matplotlib serves only /usr/bin/python3, and PATH may hold another).
BENCH_PLOTTER=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/plots/weft_plot.py
BENCH_PLOT_PY=

# The machine for the plots' captions, without its host name: "2 cores, Debian 12".
bench_machine() {
    local os=
    [ -r /etc/os-release ] && os=$(. /etc/os-release && echo "${NAME:-} ${VERSION_ID:-}" | sed 's| GNU/Linux||')
    echo "$(nproc) cores${os:+, $os}"
}

# bench_plot SUBCOMMAND ARG...: one PNG by weft_plot.py. Never changes the caller's exit status:
# without matplotlib it says so once and draws nothing; BENCH_PLOTS=0 turns the plots off.
bench_plot() {
    [ "${BENCH_PLOTS:-1}" = 0 ] && return 0
    if [ -z "$BENCH_PLOT_PY" ]; then
        local py
        BENCH_PLOT_PY=none
        for py in python3 /usr/bin/python3; do
            if "$py" -c 'import matplotlib' >/dev/null 2>&1; then
                BENCH_PLOT_PY=$py
                break
            fi
        done
        if [ "$BENCH_PLOT_PY" = none ]; then
            echo "plots skipped: python3-matplotlib is not installed (scripts/install-deps.sh installs it)" >&2
        fi
    fi
    [ "$BENCH_PLOT_PY" = none ] && return 0
    "$BENCH_PLOT_PY" "$BENCH_PLOTTER" "$@" --machine "$(bench_machine)" ||
        echo "${BENCH_SCRIPT:-bench_lib.sh}: plot '$1' failed (the tables stand)" >&2
    return 0
}
