# Sourced by the GPU scripts: install the carried wheels and this package (no network on the GPU
# machine), then make the deterministic random E4B checkpoint and a 45 s speech file.
R=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$R"/.whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/pkg "$R" || exit 1
export PYTHONUNBUFFERED=1
G3="env PYTHONPATH=/tmp/pkg:/tmp/site python3"
cd /tmp
[ -f /tmp/ckpt/model.safetensors ] || $G3 -c "from gemma3n_iree.runtime.synthetic import write_random_checkpoint as w; from gemma3n_iree.model.audio_config import builtin_config as b; w('/tmp/ckpt', b('e4b'), seed=0)"
[ -f /tmp/long45.wav ] || $G3 "$R/scripts/long_speech.py" /tmp/long45.wav 45
