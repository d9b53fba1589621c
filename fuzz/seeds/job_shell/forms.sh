#!/bin/bash
PARALLEL_ARGS="--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2"
GPT_ARGS="--num-layers 24 \
  --hidden-size 2048"
A=(a "b c" '$d')
echo "${A[@]}" x${A[@]}y "${A[*]}" ${#A[@]} ${B:-def} "${RUN[@]}" ${UNSET:+z}
RUN=()
"${RUN[@]}" torchrun $PARALLEL_ARGS pretrain_gpt.py $GPT_ARGS $EXTRA "$(hostname)" --save=$CKPT
if [ -n "${SLURM_JOB_ID:-}" ]; then X=slurm; else X=local; fi
[ "$X" = local ] && Y=yes || Y=no
case "$X" in
  local) Z=1 ;;
  *) Z=2 ;;
esac
f() { W=3; }
cat <<EOF2 > /dev/null
$(date)
EOF2
echo $X $Y $Z $W 2>&1 | tee log
