# Sourced by the decoder's GPU scripts (gpu_decode_step.sh, gpu_same_logits.sh, gpu_decode_numerics.sh), with V
# the variant: install the carried runtime wheel and this package (no network on the GPU machine), set the call's
# time budget (`step LIMIT CMD...` runs CMD within what is left of it) and write the deterministic random decoder
# checkpoint of `tests/synthetic_text.ensure_random_decoder` (seed 0) to $W/decoder-$V unless it is there.
R=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-/tmp/out}
W=/tmp/w
mkdir -p "$OUT" "$W"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$R"/.whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --upgrade --target /tmp/pkg "$R" || exit 1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg:/tmp/site:$R/tests:$R/scripts
BUDGET=${BUDGET:-570}
source "$R/scripts/gpu_budget.sh"
step() { local limit; limit=$(cap "$1"); shift; echo "== [$(( $(date +%s) - T0 )) s] $*" >&2; timeout "$limit" "$@"
         echo "rc=$?" >&2; }
cd /tmp && step 240 python3 -c "
from synthetic_text import ensure_random_decoder
from gemma3n_iree.model.decoder_config import builtin_decoder_config
ensure_random_decoder('$W/decoder-$V', builtin_decoder_config('$V'), seed=0)"
