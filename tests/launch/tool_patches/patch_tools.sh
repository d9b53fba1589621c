#!/bin/bash
# patch_tools.sh SHARED_TOOLS DEST - a copy of ../shared/tools with what the
# launch matrix needs beyond the tools as shipped (docs/launch-checks.md):
#  1. Transformer Engine's FusedAdam with its parameters (TE 2.17.1,
#     NVIDIA/TransformerEngine transformer_engine/pytorch/optimizers/
#     fused_adam.py): Megatron-Core's OptimizerConfig inspects them for the
#     precision-aware optimizer (optimizer_config.py: master_weight_dtype,
#     exp_avg_dtype, exp_avg_sq_dtype, use_decoupled_grad), and the tools'
#     generic stub has no signature, so every such launch failed in both
#     tools ("Current FusedAdam of TE doesn't support ...");
#  2. Llama 3.1 70B's and 405B's config.json (the Megatron-Bridge recipes
#     download them; the tools read hf_configs/ instead): the values of
#     meta-llama/Llama-3.1-70B and -405B's published config.json.
# The shared tools are outside this repository; this leaves them as they
# are and writes the patched copy to DEST.
set -eu
SRC=$1
DEST=$2
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$DEST"
cp -r "$SRC" "$DEST"
cp "$HERE"/Meta-Llama-3.1-70B.json "$HERE"/Meta-Llama-3.1-405B.json "$DEST/framework_check/hf_configs/"
python3 - "$DEST" <<'PY'
import sys
dest = sys.argv[1]
stub = '''
    # (trainplan tests/launch/tool_patches) TE 2.17.1's FusedAdam
    # parameters, which OptimizerConfig inspects for the precision-aware
    # optimizer: a plain class, so inspect.signature sees them.
    import importlib as _il
    _te_opt = _il.import_module("transformer_engine.pytorch.optimizers")
    class FusedAdam:
        def __init__(self, params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999),
                     eps=1e-8, weight_decay=0.0, amsgrad=False, *, capturable=False,
                     master_weights=False, master_weight_dtype=None, exp_avg_dtype=None,
                     exp_avg_sq_dtype=None, use_decoupled_grad=False,
                     store_param_remainders=False, set_grad_none=None):
            pass
    _te_opt.FusedAdam = FusedAdam
'''
p = dest + "/megatron_check/megatron_validate.py"
s = open(p).read()
anchor = "    sys.meta_path.insert(0, StubFinder())\n"
assert anchor in s, p
open(p, "w").write(s.replace(anchor, anchor + stub, 1))
p = dest + "/framework_check/fwstubs.py"
s = open(p).read()
anchor = "        sys.meta_path.insert(0, _Finder())\n"
assert anchor in s, p
open(p, "w").write(s.replace(anchor, anchor + "    if 'transformer_engine' in PREFIXES:"
                             + stub.replace("\n    ", "\n        "), 1))
PY
echo "patched copy in $DEST"
