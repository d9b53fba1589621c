#!/usr/bin/env bash
# files_e2e.sh - the files a command reads and writes (issue 30, "lost or
# damaged data"): one output layer (emit/out.c) for every command.
#   - "-" is the caller's stream: `--sbatch -` and `--svg -` write it when
#     -o FILE takes the command's output, and are refused (64) when the
#     command's output already goes there (they wrote everything, then
#     exited 74 "write failed: Success" having closed standard output);
#     `hw import-nccl-tests -o -` is refused (a directory is written), and
#     its files go through the same writer (modes as a shell gives);
#   - an output naming one of the command's inputs is refused (64), the
#     input left as it was: --near/--megatron-args job files, model show's
#     config.json (by name, ./name, absolute path, a symbolic link), diff's
#     OLD and NEW, merge's inputs, a config.json a sweep spec names;
#   - two outputs naming one file (-o X --svg X) are refused (64), nothing
#     written; two writers of /dev/null are not;
#   - /dev/stdout onto the file the command's output goes to is refused;
#     /dev/stdout into a file or pipe otherwise is written in place (the
#     shell's file keeps its inode, >> appends), never renamed over.
# (sweep --resume's checks are in sweep_e2e.sh; the library's standard
# output in test_lib.c.)
#
# usage: files_e2e.sh TRAINPLAN SCRATCH FIXTURES_DIR
set -u
TP=$1
S=$2
FIX=$3
rm -rf "$S"
mkdir -p "$S"
cd "$S" || exit 1
unset TRAINPLAN_HWDB
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# expect RC CMD...: stdout in out, stderr in err
expect() {
    local want=$1
    shift
    "$@" >out 2>err
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else
        bad "exit $rc, expected $want: $*"
        sed 's/^/  stderr: /' err | head -5 >&2
    fi
}
has() { if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1"; fi; }
same() { if cmp -s "$1" "$2"; then ok; else bad "$3: $1 and $2 differ"; fi; }
absent() { if [ -e "$1" ]; then bad "$2: $1 was written"; else ok; fi; }
empty() { if [ -s "$1" ]; then bad "$2: $1 is not empty"; else ok; fi; }

SRCH=(search --model gpt3-1.7b --system eos --max-gpus 16 --seq-length 2048
      --global-batch-size 256)

# --- "-": the caller's stream, written, never closed -----------------------
expect 64 "$TP" "${SRCH[@]}" --sbatch -
has err "--sbatch -: the command's output already goes to standard output (no -o)" "--sbatch - without -o"
empty out "--sbatch - refused before anything is written"
expect 64 "$TP" "${SRCH[@]}" --svg -
has err "--svg -: the command's output already goes to standard output" "--svg - without -o"
expect 64 "$TP" "${SRCH[@]}" -o - --svg -
has err "-o - and --svg -: both would write standard output" "-o - --svg -"
expect 0 "$TP" "${SRCH[@]}" -o table.txt --sbatch -
if [ "$(head -1 out)" = "#!/bin/bash" ]; then ok; else bad "--sbatch - with -o: the script is not on standard output"; fi
has table.txt "launch" "--sbatch - with -o: the table in the file"
cp out job.sh
expect 0 "$TP" "${SRCH[@]}" -o table2.txt --svg -
if head -1 out | grep -q '^<?xml'; then ok; else bad "--svg - with -o: no SVG on standard output"; fi
# standard output stays usable after "-" (a pipe: the reader sees all)
"$TP" "${SRCH[@]}" -o table3.txt --sbatch - | cat >piped.sh
same job.sh piped.sh "--sbatch - into a pipe"
expect 64 "$TP" hw import-nccl-tests -o - "$FIX/nccl/all_reduce_perf_1x8.log"
has err "-o -: this command writes files into a directory" "import -o -"
# import writes through the same writer: new files 0666 less the umask
# (mkstemp's 0600 made a shared hwdb unreadable to others), a replaced
# file keeps its mode, no temporary file left
(umask 022 && "$TP" hw import-nccl-tests --system eos -o hwx "$FIX/nccl/all_reduce_perf_2x8.log" >out 2>err)
if [ "$(stat -c %a hwx/systems/eos.json)" = 644 ] \
   && [ "$(stat -c %a hwx/measured/eos/nccl-tests_allreduce_2x8.csv)" = 644 ]; then ok; else
    bad "import: modes $(stat -c %a hwx/systems/eos.json hwx/measured/eos/*.csv | tr '\n' ' '), expected 644"
fi
chmod 640 hwx/systems/eos.json
(umask 022 && "$TP" hw import-nccl-tests --system eos -o hwx "$FIX/nccl/all_gather_perf_2x8.log" >out 2>err)
if [ "$(stat -c %a hwx/systems/eos.json)" = 640 ]; then ok; else bad "import: a replaced file's mode not kept"; fi
if ls hwx/systems hwx/measured/eos | grep -q '\.tmp\.'; then bad "import left a temporary file"; else ok; fi

# --- an output naming an input ----------------------------------------------
cp job.sh job0.sh
expect 64 "$TP" search --near job.sh --sbatch job.sh -o t.txt
has err "--sbatch job.sh is --near job.sh: the output would replace the file it reads" "--near X --sbatch X"
same job0.sh job.sh "--near X --sbatch X leaves the job"
absent t.txt "--near X --sbatch X"
expect 64 "$TP" estimate --megatron-args job.sh -o job.sh
has err "-o job.sh is --megatron-args job.sh" "--megatron-args X -o X"
same job0.sh job.sh "--megatron-args X -o X leaves the job"
ln -s job.sh link.sh
expect 64 "$TP" estimate --megatron-args job.sh -o link.sh
has err "-o link.sh is --megatron-args job.sh" "-o through a symbolic link to the input"
same job0.sh job.sh "-o link leaves the job"
cp "$FIX/hf/falcon-7b.json" cfg.json
cp cfg.json cfg0.json
for o in cfg.json ./cfg.json "$PWD/cfg.json" sub/../cfg.json; do
    mkdir -p sub
    expect 64 "$TP" model show cfg.json -o "$o"
    has err "is the model cfg.json: the output would replace the file it reads" "model show X -o $o"
    same cfg0.json cfg.json "model show X -o $o leaves X"
done
# standard output appended to the input (a shell's >>): refused too
"$TP" model show cfg.json >>cfg.json 2>err
rc=$?
if [ $rc -eq 64 ]; then ok; else bad "model show X >> X: exit $rc, expected 64"; fi
has err "the command's output (standard output, no -o) is the model cfg.json: the output would write into the file it reads" "model show X >> X"
same cfg0.json cfg.json "model show X >> X leaves X"
expect 0 "$TP" model show cfg.json -o shown.txt
has shown.txt "params" "model show -o another file"
# sweep: the spec, and a config.json the spec names
cat >spec.json <<'J'
{"models": ["cfg.json"], "systems": ["eos"], "gpus": [8], "seq_lengths": [2048],
 "global_batch_sizes": [256]}
J
cp spec.json spec0.json
expect 64 "$TP" sweep spec.json -o spec.json
has err "-o spec.json is the spec spec.json" "sweep -o the spec"
expect 64 "$TP" sweep --overwrite spec.json -o cfg.json
has err "-o cfg.json is the spec's model cfg.json" "sweep -o a model the spec names"
same cfg0.json cfg.json "sweep -o the spec's model leaves it"
same spec0.json spec.json "sweep -o the spec leaves it"
expect 0 "$TP" sweep spec.json -o a.jsonl
cp a.jsonl b.jsonl
cp b.jsonl b0.jsonl
# diff and merge
expect 64 "$TP" diff a.jsonl b.jsonl -o b.jsonl
has err "-o b.jsonl is NEW b.jsonl: the output would replace the file it reads" "diff -o NEW"
same b0.jsonl b.jsonl "diff -o NEW leaves NEW"
expect 64 "$TP" diff a.jsonl b.jsonl -o a.jsonl
has err "-o a.jsonl is OLD a.jsonl" "diff -o OLD"
expect 0 "$TP" diff a.jsonl b.jsonl -o report.txt
expect 64 "$TP" merge a.jsonl -o a.jsonl
has err "-o a.jsonl is the input a.jsonl" "merge -o an input"
same b0.jsonl a.jsonl "merge -o an input leaves it"

# --- two outputs, one file ----------------------------------------------------
expect 64 "$TP" "${SRCH[@]}" -o x.txt --svg x.txt
has err "-o x.txt and --svg x.txt name one file" "-o X --svg X"
absent x.txt "-o X --svg X"
expect 64 "$TP" "${SRCH[@]}" -o y.txt --sbatch ./sub/../y.txt
has err "name one file" "-o X --sbatch ./sub/../X"
absent y.txt "-o X --sbatch ./sub/../X"
expect 0 "$TP" "${SRCH[@]}" -o /dev/null --svg /dev/null
empty out "two writers of /dev/null"

# --- /dev/stdout ----------------------------------------------------------------
# onto the file the table goes to: refused, not renamed over it
"$TP" "${SRCH[@]}" --sbatch /dev/stdout >tab.txt 2>err
rc=$?
if [ $rc -eq 64 ]; then ok; else bad "--sbatch /dev/stdout > the table's file: exit $rc, expected 64"; fi
has err "the command's output (standard output, no -o) and --sbatch /dev/stdout name one file: one output would replace or garble the other" "--sbatch /dev/stdout onto the table"
# into another file: written in place (the shell's file keeps its inode)
: >sb.txt
ino=$(stat -c %i sb.txt)
"$TP" "${SRCH[@]}" -o tab2.txt --sbatch /dev/stdout >sb.txt 2>err
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "--sbatch /dev/stdout > file: exit $rc"; fi
if [ "$(stat -c %i sb.txt)" = "$ino" ]; then ok; else bad "--sbatch /dev/stdout: the shell's file was renamed over"; fi
if [ "$(head -1 sb.txt)" = "#!/bin/bash" ]; then ok; else bad "--sbatch /dev/stdout: no script in the file"; fi
# >> appends
echo first >app.txt
"$TP" model list -o /dev/stdout >>app.txt 2>err
if [ "$(head -1 app.txt)" = first ] && grep -q gpt3-1.7b app.txt; then ok; else bad "-o /dev/stdout >> file did not append"; fi
# into a pipe (it made a file named pipe:[N])
n=$("$TP" model list -o /dev/stdout 2>err | grep -c gpt3-1.7b)
if [ "$n" -ge 1 ]; then ok; else bad "-o /dev/stdout into a pipe: $(cat err)"; fi
if ls | grep -q '^pipe:'; then bad "-o /dev/stdout into a pipe made a file"; else ok; fi
n=$("$TP" model list -o /dev/fd/1 2>err | grep -c gpt3-1.7b)
if [ "$n" -ge 1 ]; then ok; else bad "-o /dev/fd/1 into a pipe: $(cat err)"; fi

echo "files_e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
