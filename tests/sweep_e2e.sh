#!/usr/bin/env bash
# sweep_e2e.sh - end-to-end tests of `trainplan sweep`, `merge` and `diff`:
# bad specs (every problem at once, nothing written), byte identity of a
# sweep at any thread count, kill -9 at several moments then --resume
# (byte-identical to a clean run), torn last lines, SIGTERM/SIGINT,
# --shard + merge, mpirun -np 2 and -np 4 (when built with
# -DTRAINPLAN_MPI=ON; skipped with a message otherwise), and diff of two
# sweeps with a changed hwdb price. Times are never pinned: the estimator
# is recalibrated often; structure and bytes are.
#
# usage: sweep_e2e.sh TRAINPLAN SCRATCH HWDB_SOURCE_DIR [MPIEXEC]
set -u
TP=$1
S=$2
HWDB=$3
MPIEXEC=${4:-}
. "$(dirname "$0")/sweep_lib.sh"
now() { date +%s.%N; }
# session_pids SID: the processes of session SID (from /proc; ps is not on
# a bare Debian), none for an empty SID
session_pids() {
    [ -n "$1" ] || return 0
    for d in /proc/[0-9]*; do
        [ "$(awk '{ print $6 }' "$d/stat" 2>/dev/null)" = "$1" ] && echo "${d#/proc/}"
    done
}
# calc EXPR: floating-point arithmetic with awk (bc is not on a bare Debian)
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

cd "$S"

# --- the spec of the tests: 3 models x 2 systems x 8 GPU counts x 2 = 96 --
cat >spec.json <<'J'
{"comment": "sweep_e2e.sh",
 "models": ["gpt3-1.7b", "llama2-7b", "llama2-13b"],
 "systems": ["eos", "selene"],
 "gpus": [8, 16, 32, 64, 128, 256, 512, 1024],
 "seq_lengths": [4096], "global_batch_sizes": [1024], "tokens": [null, 1e12],
 "options": {"top": 3}}
J
N=96

# --- bad specs --------------------------------------------------------------
expect 64 "$TP" sweep
expect 66 "$TP" sweep missing.json -o x.jsonl
echo '{"models": [' >trunc.json
expect 65 "$TP" sweep trunc.json -o x.jsonl
cat >bad.json <<'J'
{"models": ["gpt3-1.7b", "foo"], "systems": ["eos", "eoss"], "gpus": [0, 8],
 "seq_lengths": [2048], "global_batch_sizes": ["big"], "precisions": ["fp9"],
 "colour": "red", "options": {"top": 0, "speed": 1}}
J
expect 65 "$TP" sweep bad.json -o x.jsonl
for p in '$.models[1]: unknown model' '(see trainplan model list)' \
    '$.systems[1]: unknown system' '$.gpus[0]:' '$.global_batch_sizes[0]:' \
    '$.precisions[0]:' '$.colour: unknown key' '$.options.top:' \
    '$.options.speed: unknown option' '8 problems in the sweep spec'; do
    has err "$p" "bad spec report"
done
if [ -e x.jsonl ]; then bad "a bad spec wrote x.jsonl"; else ok; fi
cat >fp8.json <<'J'
{"models": ["gpt3-1.7b"], "systems": ["selene"], "gpus": [8],
 "seq_lengths": [2048], "global_batch_sizes": [64], "precisions": ["fp8"]}
J
expect 65 "$TP" sweep fp8.json -o x.jsonl
has err "scenario 0 (gpt3-1.7b on selene, gpus 8): --precision fp8" "fp8 on A100"
expect 64 "$TP" sweep --resume spec.json
has err "--resume needs -o FILE" "--resume without -o"
expect 64 "$TP" sweep --shard 2/2 spec.json -o x.jsonl
expect 64 "$TP" sweep --shard a spec.json -o x.jsonl
expect 64 "$TP" diff --threshold -1 a b
expect 64 "$TP" --format md model list

# --- a clean run: the reference -----------------------------------------------
t0=$(now)
expect 0 "$TP" sweep spec.json -o ref.jsonl
T=$(calc "$(now) - $t0")
echo "clean sweep of $N scenarios: $T s" >&2
if [ "$(wc -l <ref.jsonl)" -eq $N ]; then ok; else bad "ref.jsonl: $(wc -l <ref.jsonl) lines, expected $N"; fi
if [ -s out ]; then bad "sweep -o wrote to stdout"; else ok; fi
# In scenario order, each with its inputs, digests, version, form (compact
# by default, issue 32), best, search.
idx=$(grep -o '^{"schema_version":1,"index":[0-9]*' ref.jsonl | sed 's/.*://' | tr '\n' ' ')
if [ "$idx" = "$(seq 0 $((N - 1)) | tr '\n' ' ')" ]; then ok; else bad "record order: $idx"; fi
for k in '"count":96' '"id":"' '"scenario":{"model":"gpt3-1.7b","system":"eos","gpus":"8"' \
    '"version":"' '"record":"compact"' '"fnv1a64":"' '"gpu_fnv1a64":"' '"status":"ok"' '"best":{"layout":"' \
    '"ranked":[' '"pareto":[' '"stats":{'; do
    has ref.jsonl "$k" "record"
done
if grep -q '"elapsed_s"\|"threads"' ref.jsonl; then bad "a record holds timing"; else ok; fi
# Same bytes at one thread, and to stdout.
expect 0 "$TP" --threads 1 sweep spec.json -o t1.jsonl
same ref.jsonl t1.jsonl "--threads 1"
expect 0 "$TP" sweep spec.json
same ref.jsonl out "sweep to stdout"
# A progress line only when asked (stderr is not a terminal here).
expect 0 "$TP" sweep spec.json -o p.jsonl
if [ -s err ]; then bad "progress on a non-terminal without --progress"; else ok; fi
expect 0 "$TP" sweep --progress --overwrite spec.json -o p.jsonl
has err "scenarios/s" "--progress"
if grep -q 'sweep:' out; then bad "progress on stdout"; else ok; fi

# --- -o is protected (issue 17) ----------------------------------------------
# A small spec (8 scenarios, fast) where the full one's timing is not needed.
cat >small.json <<'J'
{"models": ["gpt3-1.7b"], "systems": ["eos"], "gpus": [8, 16, 32, 64, 128, 256, 512, 1024],
 "seq_lengths": [4096], "global_batch_sizes": [1024], "options": {"top": 3}}
J
expect 0 "$TP" sweep small.json -o small.jsonl
# A file that holds records is never emptied without --resume or
# --overwrite; -o naming the spec is refused.
cp ref.jsonl keep.jsonl
expect 64 "$TP" sweep spec.json -o keep.jsonl
has err "keep.jsonl: already holds $(stat -c %s ref.jsonl) bytes" "-o holding records refused"
has err "--overwrite replaces the file" "-o holding records: the hint"
same ref.jsonl keep.jsonl "a refused sweep leaves -o as it was"
for flag in "" --resume --overwrite; do
    expect 64 "$TP" sweep $flag spec.json -o spec.json
    has err "-o spec.json is the spec spec.json: the output would replace the file it reads" "-o the spec ($flag)"
done
if grep -q '"models"' spec.json; then ok; else bad "the spec was overwritten"; fi
expect 64 "$TP" sweep --resume --overwrite spec.json -o keep.jsonl
has err "give one" "--resume with --overwrite"
# --resume never empties a file that is not this sweep's output (issue
# 30): a CSV, another spec's complete output; 65, the file as it was.
printf 'name,params\nx,1\n' >notes.csv
cp notes.csv notes0.csv
expect 65 "$TP" sweep --resume small.json -o notes.csv
has err "notes.csv: not this sweep's output, refused by --resume: its first line 'name,params' is not a sweep record" "--resume on a CSV"
has err "--overwrite instead of --resume" "--resume on a CSV: the hint"
same notes0.csv notes.csv "a refused --resume leaves the CSV as it was"
cp ref.jsonl other.jsonl
expect 65 "$TP" sweep --resume small.json -o other.jsonl
has err "its first line is a record of another spec (scenario 0 of 96" "--resume on another spec's output"
same ref.jsonl other.jsonl "a refused --resume leaves another spec's output as it was"
expect 65 "$TP" sweep --resume --shard 1/2 small.json -o small.jsonl
has err "this call starts at scenario 1 (another --shard's file?)" "--resume on another shard's file"
expect 0 "$TP" sweep --overwrite small.json -o notes.csv
same small.jsonl notes.csv "--overwrite replaces what --resume refuses"
# A record whose body was damaged but still parses (a digit changed) is
# redone: the finished file is a clean run's bytes.
sed '3s/"seq_length":4096/"seq_length":4097/' small.jsonl >dmg.jsonl
if cmp -s dmg.jsonl small.jsonl; then bad "the damage changed nothing"; else ok; fi
expect 0 "$TP" sweep --resume small.json -o dmg.jsonl
has err "keeping 2 complete records" "--resume keeps the records before the damaged one"
has err "damaged: its record_fnv1a64 does not match its bytes" "--resume names the damage"
same small.jsonl dmg.jsonl "a damaged record redone by --resume"
expect 64 "$TP" sweep --overwrite spec.json
has err "--overwrite needs -o FILE" "--overwrite without -o"
# --overwrite: last night's file survives a SIGTERM and a kill -9, and is
# replaced (keeping its mode) only when the sweep finishes.
printf 'last night\n' >old.jsonl
chmod 640 old.jsonl
"$TP" sweep --overwrite spec.json -o old.jsonl 2>ow.err &
pid=$!
sleep "$(calc "$T * 0.4")"
kill -TERM $pid
wait $pid
rc=$?
if [ $rc -eq 143 ] || [ $rc -eq 0 ]; then ok; else bad "--overwrite, SIGTERM: exit $rc, expected 143"; fi
if [ $rc -eq 143 ]; then
    has ow.err "the -o file is left as it was" "--overwrite, SIGTERM: message"
    has old.jsonl "last night" "--overwrite, SIGTERM: the old file kept"
fi
if ls old.jsonl.tmp.* >/dev/null 2>&1; then bad "--overwrite, SIGTERM: a temporary file left"; else ok; fi
printf 'last night\n' >old.jsonl
"$TP" sweep --overwrite spec.json -o old.jsonl 2>/dev/null &
pid=$!
sleep "$(calc "$T * 0.4")"
kill -9 $pid
wait $pid 2>/dev/null
rc=$?
# 137: killed, the old file must stand; 0: the sweep finished first (a
# slow measure of T), and replaced it as it should.
if [ $rc -eq 137 ]; then
    has old.jsonl "last night" "--overwrite, kill -9: the old file kept"
elif [ $rc -eq 0 ]; then
    ok
else
    bad "--overwrite, kill -9: exit $rc, expected 137 (or 0 if it finished first)"
fi
rm -f old.jsonl.tmp.* # SIGKILL leaves the temporary file: nothing can run
ln -sf old.jsonl link.jsonl
expect 0 "$TP" sweep --overwrite small.json -o link.jsonl
same small.jsonl old.jsonl "--overwrite through a symbolic link"
if [ -L link.jsonl ]; then ok; else bad "-o replaced a symbolic link"; fi
if [ "$(stat -c %a old.jsonl)" = 640 ]; then ok; else bad "--overwrite: mode $(stat -c %a old.jsonl), expected 640"; fi
if ls old.jsonl.tmp.* >/dev/null 2>&1; then bad "--overwrite: a temporary file left"; else ok; fi
# Two sweeps on one -o: the second is refused at once (75), naming the
# first. The first is stopped (SIGSTOP) while the second tries, so the
# test does not depend on timing.
rm -f lk.jsonl
"$TP" sweep spec.json -o lk.jsonl 2>/dev/null &
pid=$!
for _ in $(seq 250); do [ -e lk.jsonl ] && break; sleep 0.02; done
kill -STOP $pid
expect 75 "$TP" sweep small.json -o lk.jsonl
has err "lk.jsonl: another sweep (process $pid) is writing this file" "second writer refused"
expect 75 "$TP" sweep --resume spec.json -o lk.jsonl
kill -CONT $pid
wait $pid
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "the first sweep of a lock test: exit $rc"; fi
same ref.jsonl lk.jsonl "the first writer's file, untouched by the second"

# --- outputs: devices, FIFOs, links, modes, full disks, size limits ------------
expect 0 "$TP" sweep small.json -o /dev/null
expect 0 "$TP" diff ref.jsonl ref.jsonl -o /dev/null
if [ -c /dev/null ]; then ok; else bad "-o /dev/null replaced the device"; fi
rm -f fifo fifo.out
mkfifo fifo
timeout 120 cat fifo >fifo.out &
cpid=$!
expect 0 "$TP" diff ref.jsonl ref.jsonl -o fifo
wait $cpid
if [ -p fifo ]; then ok; else bad "-o FIFO replaced the FIFO"; fi
has fifo.out "0 changed" "diff -o FIFO"
timeout 120 cat fifo >fifo.jsonl &
cpid=$!
expect 0 "$TP" sweep small.json -o fifo
wait $cpid
same small.jsonl fifo.jsonl "sweep -o FIFO"
# Modes: a new file 0666 & ~umask, a replaced one keeps its own.
rm -f m1.txt m2.txt
(umask 022 && "$TP" diff ref.jsonl ref.jsonl -o m1.txt)
(umask 027 && "$TP" diff ref.jsonl ref.jsonl -o m2.txt)
if [ "$(stat -c %a m1.txt)" = 644 ]; then ok; else bad "new -o file under umask 022: mode $(stat -c %a m1.txt)"; fi
if [ "$(stat -c %a m2.txt)" = 640 ]; then ok; else bad "new -o file under umask 027: mode $(stat -c %a m2.txt)"; fi
chmod 604 m1.txt
expect 0 "$TP" diff ref.jsonl ref.jsonl -o m1.txt
if [ "$(stat -c %a m1.txt)" = 604 ]; then ok; else bad "replaced -o file: mode $(stat -c %a m1.txt), expected 604"; fi
# A symbolic link, dangling or not: the target is written, the link stays.
rm -f dl.txt dangling.txt
ln -s dangling.txt dl.txt
expect 0 "$TP" diff ref.jsonl ref.jsonl -o dl.txt
if [ -L dl.txt ]; then ok; else bad "diff -o replaced a symbolic link"; fi
has dangling.txt "0 changed" "diff -o through a dangling link"
# A full disk (/dev/full): exit 74 with a message, for every output path.
full() { # full WHAT CMD...: runs CMD with stdout on /dev/full, expects 74
    local what=$1
    shift
    "$@" >/dev/full 2>"$S/err"
    local rc=$?
    if [ $rc -eq 74 ]; then ok; else bad "$what: exit $rc, expected 74"; fi
    has "$S/err" "No space left on device" "$what: message"
}
full "diff >/dev/full (changes)" "$TP" diff ref.jsonl keep.jsonl --threshold 0
full "diff >/dev/full" "$TP" diff ref.jsonl ref.jsonl
full "diff --format json >/dev/full" "$TP" diff ref.jsonl ref.jsonl --format json
full "diff -o /dev/full" "$TP" diff ref.jsonl ref.jsonl -o /dev/full
full "sweep >/dev/full" "$TP" sweep small.json
full "sweep -o /dev/full" "$TP" sweep small.json -o /dev/full
full "merge >/dev/full" "$TP" merge ref.jsonl
full "model list >/dev/full" "$TP" model list
# A file size limit (ulimit -f, in KiB): SIGXFSZ is ignored, the write
# fails with EFBIG: exit 74 with a message, no temporary file left.
for c in "merge ref.jsonl -o fz.jsonl" "sweep --overwrite spec.json -o old.jsonl" \
    "search --model llama2-7b --system eos --gpus 64 --seq-length 4096 --global-batch-size 1024 --format json -o fz.jsonl" \
    "sweep small.json -o fzs.jsonl"; do
    rm -f fz.jsonl fzs.jsonl
    (ulimit -f 4 && exec "$TP" $c) >/dev/null 2>"$S/err"
    rc=$?
    if [ $rc -eq 74 ]; then ok; else bad "ulimit -f 4, $c: exit $rc, expected 74"; fi
    has "$S/err" "File too large" "ulimit -f 4, $c: message"
    if ls ./*.tmp.* >/dev/null 2>&1; then bad "ulimit -f 4, $c: left $(ls ./*.tmp.*)"; rm -f ./*.tmp.*; else ok; fi
done
if [ -e fz.jsonl ]; then bad "an output cut by ulimit -f was written"; else ok; fi
same small.jsonl old.jsonl "--overwrite cut by ulimit -f: the old file kept"
# The in-place sweep cut by the limit resumes to the same bytes.
expect 0 "$TP" sweep --resume small.json -o fzs.jsonl
same small.jsonl fzs.jsonl "a sweep cut by ulimit -f, then --resume"
# SIGHUP, SIGINT, SIGTERM while -o's temporary file is open: it is removed
# and the signal ends the process. (A script's background job ignores
# SIGINT, as POSIX wants: then the search runs to its end.)
for sig in HUP INT TERM; do
    rm -f sg.txt
    "$TP" search --model llama2-70b --system eos,selene,perlmutter --max-gpus 4096 \
        --seq-length 4096 --global-batch-size 1024 --no-prune -o sg.txt 2>/dev/null &
    pid=$!
    for _ in $(seq 250); do ls sg.txt.tmp.* >/dev/null 2>&1 && break; sleep 0.02; done
    kill -$sig $pid
    wait $pid
    rc=$?
    want=$((128 + $(kill -l $sig)))
    if [ $rc -eq $want ] || { [ $sig = INT ] && [ $rc -eq 0 ]; }; then ok; else
        bad "search -o killed by SIG$sig: exit $rc, expected $want"
    fi
    if ls sg.txt.tmp.* >/dev/null 2>&1; then bad "SIG$sig left $(ls sg.txt.tmp.*)"; else ok; fi
    if [ $rc -ne 0 ] && [ -e sg.txt ]; then bad "SIG$sig: a killed search wrote sg.txt"; else ok; fi
done

# --- kill -9 at several moments, then --resume ----------------------------
# Fractions of the clean run's time, and one random moment.
r=$(awk -v s=$RANDOM 'BEGIN { srand(s); printf "%.2f", 0.1 + 0.8 * rand() }')
for f in 0.05 0.25 0.5 0.75 0.95 $r; do
    d=$(calc "$T * $f")
    rm -f k.jsonl
    "$TP" sweep spec.json -o k.jsonl 2>/dev/null &
    pid=$!
    sleep "$d"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    n=$(cat k.jsonl 2>/dev/null | wc -l)
    # What a killed run leaves: complete records of the reference, in order.
    if [ -e k.jsonl ] && [ "$n" -gt 0 ]; then
        head -n "$n" k.jsonl >k.head
        head -n "$n" ref.jsonl >ref.head
        same ref.head k.head "records written before kill -9 at $f"
    fi
    echo "kill -9 at $f of the run ($d s): $n of $N records" >&2
    expect 0 "$TP" sweep --resume spec.json -o k.jsonl
    same ref.jsonl k.jsonl "kill -9 at $f then --resume"
done
# Resuming a complete file changes nothing.
expect 0 "$TP" sweep --resume spec.json -o k.jsonl
same ref.jsonl k.jsonl "--resume of a complete file"

# --- torn and foreign lines ------------------------------------------------------
size=$(stat -c %s ref.jsonl)
for cut in 1 $((size / 3)) $((size / 2 + 17)) $((size - 2)); do
    head -c "$cut" ref.jsonl >torn.jsonl
    expect 0 "$TP" sweep --resume spec.json -o torn.jsonl
    same ref.jsonl torn.jsonl "torn at byte $cut then --resume"
done
head -n 5 ref.jsonl >junk.jsonl
printf '{"index":5,"count":96,"id":"not-a-record"}\n{"garbage\n' >>junk.jsonl
expect 0 "$TP" sweep --resume spec.json -o junk.jsonl
has err "keeping 5 complete records" "foreign lines cut"
same ref.jsonl junk.jsonl "foreign lines then --resume"
# A torn line is never merged.
head -c $((size / 2 + 17)) ref.jsonl >torn.jsonl
expect 65 "$TP" merge torn.jsonl -o m.jsonl
has err "is incomplete" "merge of a torn file"

# --- SIGTERM and SIGINT: stop after the current record ---------------------------
for sig in TERM INT; do
    rm -f s.jsonl
    "$TP" sweep spec.json -o s.jsonl 2>sig.err &
    pid=$!
    sleep "$(calc "$T * 0.4")"
    kill -$sig $pid
    wait $pid
    rc=$?
    want=$([ $sig = TERM ] && echo 143 || echo 130)
    if [ $rc -eq "$want" ] || [ $rc -eq 0 ]; then ok; else bad "SIG$sig: exit $rc, expected $want"; fi
    if [ $rc -eq "$want" ]; then has sig.err "rerun with --resume" "SIG$sig message"; fi
    if [ ! -s s.jsonl ] || [ "$(tail -c 1 s.jsonl | od -An -c | tr -d ' ')" = '\n' ]; then ok; else
        bad "SIG$sig left a torn line"
    fi
    expect 0 "$TP" sweep --resume spec.json -o s.jsonl
    same ref.jsonl s.jsonl "SIG$sig then --resume"
done

# --- --shard I/N and merge --------------------------------------------------------
for i in 0 1 2; do expect 0 "$TP" sweep --shard $i/3 spec.json -o sh$i.jsonl; done
if [ "$(cat sh0.jsonl sh1.jsonl sh2.jsonl | wc -l)" -eq $N ]; then ok; else bad "shards do not add up"; fi
expect 0 "$TP" merge sh2.jsonl sh0.jsonl sh1.jsonl -o merged.jsonl
same ref.jsonl merged.jsonl "--shard 0..2/3 + merge"
expect 0 "$TP" merge sh1.jsonl sh0.jsonl sh2.jsonl sh1.jsonl -o merged.jsonl
has err "identical; kept once" "duplicate shard"
same ref.jsonl merged.jsonl "merge with a shard given twice"
rm -f merged.jsonl
expect 65 "$TP" merge sh0.jsonl sh2.jsonl -o merged.jsonl
has err "scenarios missing (the first: 1)" "merge gap"
if [ -e merged.jsonl ]; then bad "a failed merge wrote its output"; else ok; fi
# A record edited after it was written no longer matches its seal: refused.
sed '1s/"version":"[^"]*"/"version":"9.9.9"/' sh0.jsonl >sh0x.jsonl
expect 65 "$TP" merge sh0x.jsonl sh1.jsonl sh2.jsonl -o merged.jsonl
has err "sh0x.jsonl:1: a damaged record (its record_fnv1a64 does not match its bytes)" "merge of a damaged record"
# Scenario 2 of another spec of as many scenarios (other options): a
# conflict.
sed 's/"top": 3/"top": 2/' spec.json >specx.json
expect 0 "$TP" sweep --shard 2/96 specx.json -o shx.jsonl
expect 65 "$TP" merge sh0.jsonl shx.jsonl sh1.jsonl sh2.jsonl -o merged.jsonl
has err "differ (a conflict" "merge conflict"

# --- MPI --------------------------------------------------------------------------
if [ -z "$MPIEXEC" ]; then
    echo "SKIP: MPI tests (mpirun -np 2 / -np 4): trainplan was built without -DTRAINPLAN_MPI=ON" >&2
else
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    for np in 2 4; do
        rm -f mpi$np.jsonl
        expect 0 "$MPIEXEC" --oversubscribe --bind-to none -np $np -x OMP_NUM_THREADS=1 \
            "$TP" sweep spec.json -o mpi$np.jsonl
        same ref.jsonl mpi$np.jsonl "mpirun -np $np"
    done
    # Full records (--record full, which every rank reads) as one process
    # writes them
    expect 0 "$TP" sweep spec.json --record full -o reff.jsonl
    rm -f mpif.jsonl
    expect 0 "$MPIEXEC" --oversubscribe --bind-to none -np 2 -x OMP_NUM_THREADS=1 \
        "$TP" sweep spec.json --record full -o mpif.jsonl
    same reff.jsonl mpif.jsonl "mpirun -np 2 --record full"
    has mpif.jsonl '"record":"full"' "mpirun --record full: full records"
    # Killed under mpirun, resumed by one process: the same bytes. mpirun
    # runs in a session of its own so that its ranks, which outlive a
    # killed mpirun for a while, are killed too (by id) before resuming.
    rm -f mk.jsonl
    setsid "$MPIEXEC" --oversubscribe --bind-to none -np 3 -x OMP_NUM_THREADS=1 \
        "$TP" sweep spec.json -o mk.jsonl >/dev/null 2>&1 &
    pid=$!
    sleep "$(calc "$T * 0.8 + 0.5")"
    sid=$(awk '{ print $6 }' /proc/$pid/stat 2>/dev/null)
    for p in $pid $(session_pids "$sid"); do kill -9 "$p" 2>/dev/null; done
    wait $pid 2>/dev/null
    while [ -n "$(session_pids "$sid")" ]; do sleep 0.1; done
    echo "mpirun -np 3 killed: $(cat mk.jsonl 2>/dev/null | wc -l) of $N records" >&2
    expect 0 "$TP" sweep --resume spec.json -o mk.jsonl
    same ref.jsonl mk.jsonl "mpirun killed, then --resume"
fi

# --- diff: a changed hwdb price ------------------------------------------------
mkdir -p hw/systems
sed '0,/"value": 1.79,/s//"value": 2.79,/' "$HWDB/systems/selene.json" >hw/systems/selene.json
expect 0 "$TP" --hwdb hw hw show selene
has out "2.79" "price override"
expect 0 "$TP" --hwdb hw sweep spec.json -o priced.jsonl
# A resume after the hwdb changed redoes the records of the changed files.
head -n 30 ref.jsonl >rp.jsonl
expect 0 "$TP" --hwdb hw sweep --resume spec.json -o rp.jsonl
same priced.jsonl rp.jsonl "--resume after an hwdb change"
has err "keeping 16 complete records" "--resume after an hwdb change"
expect 0 "$TP" diff ref.jsonl ref.jsonl
has out "0 changed" "diff of a file with itself"
expect 3 "$TP" diff ref.jsonl priced.jsonl --format md -o diff.md
# Exactly the scenarios on selene that have a best layout (an infeasible
# one has no cost to change), each with its cost change.
want=$(grep '"scenario":{"model":"[^"]*","system":"selene"' ref.jsonl | grep -c '"status":"ok"')
if [ "$want" -gt 0 ]; then ok; else bad "no feasible scenario on selene"; fi
changed=$(grep -c '^| changed ' diff.md)
if [ "$changed" -eq "$want" ]; then ok; else bad "diff: $changed changed rows, expected $want"; fi
onsel=$(grep '^| changed ' diff.md | grep -c ' on selene, ')
if [ "$onsel" -eq "$want" ]; then ok; else bad "diff: $onsel of the changed rows on selene"; fi
has diff.md "cost +55.9%" "diff: the cost change"
has diff.md "| files: selene.json | cost +55.9% (\$" "diff: the changed file and the old -> new cost"
# A what-if in the spec (a price) changes the ids: the scenarios pair by
# position and the input that changed is named, old -> new (issue 31).
printf '%s\n' '{"models": ["gpt3-1.7b"], "systems": ["eos"], "gpus": [8, 16],' \
    '"seq_lengths": [2048], "global_batch_sizes": [256], "prices": [2.0], "options": {"top": 3}}' >wa.json
sed 's/"prices": \[2.0\]/"prices": [1.42]/' wa.json >wb.json
expect 0 "$TP" sweep wa.json -o wa.jsonl
expect 0 "$TP" sweep wb.json -o wb.jsonl
expect 3 "$TP" diff wa.jsonl wb.jsonl
has out "price_usd_per_gpu_hour 2 -> 1.42" "what-if diff: the input old -> new"
has out "cost -29.0% (\$" "what-if diff: the cost change"
has out "0 new, 0 vanished" "what-if diff: paired, not new and vanished"
has out "2 paired by position" "what-if diff: the pairing said"
expect 3 "$TP" diff wa.jsonl wb.jsonl --format json
has out '"paired_by":	"position"' "what-if diff: JSON paired_by"
# sweep --format csv, --launch, a spec's paths and its problems: tests/sweep_spec_e2e.sh
has diff.md "$want changed (threshold 0.02), 0 new, 0 vanished, $((N - want)) unchanged ($((N / 2 - want)) of them with changed input files)" "diff summary"
expect 3 "$TP" diff ref.jsonl priced.jsonl --format json
has out "\"changed\":	$want" "diff json"
# A higher threshold hides the price change.
expect 0 "$TP" diff --threshold 0.6 ref.jsonl priced.jsonl
# New and vanished scenarios are those of two specs: small.json's 8 are
# gpt3-1.7b on eos at top 3, tokens unset, 8 of ref's 96.
expect 3 "$TP" diff small.jsonl ref.jsonl
has out "88 new, 0 vanished, 8 unchanged" "diff: new scenarios"
expect 3 "$TP" diff ref.jsonl small.jsonl
has out "0 new, 88 vanished, 8 unchanged" "diff: vanished scenarios"
# An unfinished sweep (stopped, killed, one shard) is not compared: its
# missing scenarios would show as vanished (issue 17).
head -n $((N - 8)) ref.jsonl >part.jsonl
expect 65 "$TP" diff ref.jsonl part.jsonl
has err "part.jsonl: not a complete sweep: 88 records of a spec of 96 scenarios (the first missing: 88)" "diff of an unfinished sweep"
expect 65 "$TP" diff part.jsonl ref.jsonl
has err "finish it with sweep --resume" "diff of an unfinished sweep: the hint"
expect 65 "$TP" diff sh1.jsonl ref.jsonl
has err "sh1.jsonl: not a complete sweep: 32 records of a spec of 96 scenarios (the first missing: 0)" "diff of one shard"
sed '5d' ref.jsonl >hole.jsonl
expect 65 "$TP" diff ref.jsonl hole.jsonl
has err "(the first missing: 4)" "diff of a sweep with a hole"
: >empty.jsonl
expect 65 "$TP" diff ref.jsonl empty.jsonl
has err "empty.jsonl: no records" "diff of an empty file"
cat small.jsonl ref.jsonl >mixed.jsonl
expect 65 "$TP" diff ref.jsonl mixed.jsonl
has err "records of different specs" "diff of two specs' records in one file"
expect 65 "$TP" diff ref.jsonl torn.jsonl
expect 66 "$TP" diff ref.jsonl nothing.jsonl

echo "sweep_e2e: $pass passed, $fail failed" >&2
[ "$fail" -eq 0 ]
