#!/usr/bin/env bash
# Bash completion generated from the option table (`trainplan completion
# bash`): sourced in bash, then asked as bash asks it (COMP_WORDS,
# COMP_CWORD) for commands, verbs, a command's options, enumerated values
# from the table, and names listed by the binary at completion time.
#
# usage: completion_e2e.sh TRAINPLAN
set -u
tp=$1
fail=0
script=$("$tp" completion bash) || { echo "FAIL: completion bash exited $?"; exit 1; }
eval "$script"
complete -p trainplan >/dev/null || { echo "FAIL: no 'complete' for trainplan"; exit 1; }

# expect "WORDS..." WANT...: completing the last word of WORDS offers
# every WANT (and, with "=" first, nothing else)
expect() {
    local line=$1; shift
    read -r -a COMP_WORDS <<<"$line"
    [[ $line == *" " ]] && COMP_WORDS+=("")
    COMP_WORDS[0]=$tp
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _trainplan
    local got=" ${COMPREPLY[*]} " exact=0
    if [ "${1:-}" = "=" ]; then exact=1; shift; fi
    for w in "$@"; do
        case $got in *" $w "*) ;; *) echo "FAIL: '$line' offers [$got], not '$w'"; fail=1;; esac
    done
    if [ $exact = 1 ] && [ ${#COMPREPLY[@]} -ne $# ]; then
        echo "FAIL: '$line' offers [$got], expected exactly [$*]"; fail=1
    fi
}

expect "trainplan " model hw op coll estimate search sweep merge diff completion
expect "trainplan mo" = model
expect "trainplan model " = list show
expect "trainplan hw i" = import-nccl-tests
expect "trainplan search --max" = --max-gpus --max-memory-fraction
expect "trainplan search --obj" = --objective
expect "trainplan search --objective " = time throughput time-to-train cost
expect "trainplan estimate --precision f" = fp16 fp8
expect "trainplan --format j" = json jsonl
expect "trainplan search --recompute-granularity s" = selective selective-op
# options of the command given only: --folds is op cv's
expect "trainplan op cv --fo" = --folds --format
expect "trainplan search --fo" = --format
# names the binary lists at completion time
expect "trainplan search --model gpt-neox" gpt-neox-20b
expect "trainplan search -m llama" llama3-8b
expect "trainplan search --system perl" = perlmutter perlmutter-80g
expect "trainplan op show --gpu h100" h100-sxm h100-pcie
# an option's value is not the command: after it the command goes on
expect "trainplan --format json model " = list show
[ $fail = 0 ] && echo "completion_e2e: ok"
exit $fail
