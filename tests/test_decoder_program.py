"""The compiled text decoder program (`emit-gemma3n --stage decoder`) on llvm-cpu, tiny configuration.

One program per contract is compiled once for the module (4 slots x 64 positions; a prefill entry for
prompts of up to 32 positions, decode entries for batches of up to 4; the f32-reference one is built by the
README's `emit-gemma3n --stage decoder` command with decode context buckets 32 and 64) and loaded with a
checkpoint of transformers' tiny random model (tests/oracles/hf_decoder.py, seed 7: both layer types, KV
sharing, sparse and dense layers, 4 AltUp streams, a window of 6). The references and the bounds:

* the emulation (`contracts/decoder.py` with `IREE_MATH`, the program's own exp and tanh). Under
  mlx-cuda-v1 every contraction result is rounded to BF16, so a backend's F32 accumulation order shows only
  where an exact sum lies within a few F32 steps of a BF16 rounding boundary: the KV cache is asserted
  bit for bit (measured: every element of every step), the logits bit for bit except for such flips in the
  tied head, where each differing logit must be the soft-capped value of a BF16 outcome of the head's dot
  product that some accumulation order reaches (`envelope.envelope_bf16`; measured 0-3 of 262400 logits per
  step). Under f32-reference nothing rounds, every contraction's F32 order differs from the
  emulation's exact sums in the last bits and the differences travel through the layers: logits and cache
  within 1e-5 relative (L2 and max), the bound DECODER.md gives an F32 evaluation of this graph (measured
  ~3e-6);
* the float64 spec evaluation and transformers-fp32 (f32-reference): 1e-5 relative, as the emulation;
* program properties, judged program against program: prefill(S) + k decode steps against prefill(S + k)
  (different entries: different contraction shapes), a batch of three sequences against each sequence alone
  (the batch entry with one, resp. three, padding rows writing the scratch slot: bit for bit), and a
  reused slot against a fresh one (bit for bit);
* greedy tokens of f32-reference equal transformers' `generate(do_sample=False)` for 32 new tokens.

The KV cache stays on the device and is updated in place: `test_kv_cache_is_updated_in_place` reads the
program at IREE's stream level (one cache resource, every access a read-write binding, no copy of it).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.contracts import decoder as DEC
from gemma3n_iree.contracts import decoder_ops as D
from gemma3n_iree.contracts.envelope import envelope_bf16
from gemma3n_iree.contracts.kv_cache import KVCache, KVCacheLayout
from gemma3n_iree.contracts.metrics import relative_l2
from gemma3n_iree.contracts.policy import NumericContract
from gemma3n_iree.contracts.sampling import SampleRows, SamplingParams, sampled_logprob
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.decoder import TOP_LOGPROBS, DecoderBucketError, DecoderModuleSpec, emit_decoder_module
from gemma3n_iree.model.decoder_config import builtin_decoder_config
from gemma3n_iree.model.decoder_weights import read_decoder_weights
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache
from gemma3n_iree.runtime.programs.session import SessionError
from gemma3n_iree.runtime.text.decoder import DecoderSession, build_decoder_artifact, greedy

torch = pytest.importorskip("torch", reason="the checkpoint is transformers' tiny model (test-only dependency)")
pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")

from oracles import hf_decoder as H  # noqa: E402
from oracles.decoder_f64 import DecoderF64  # noqa: E402
from test_token_select import assert_selection  # noqa: E402

CFG = builtin_decoder_config("tiny")
F32 = np.float32
SLOTS, CAPACITY = 4, 64
PROMPT = [2, 105, 2364, 107, 300, 301, 600, 7000, 511, 512, 100000, 262273, 106]
CONTINUATION = [4368, 107, 302, 303, 9000, 304, 305, 50000]
CONTRACTS = [MLX_CUDA_V1, F32_REFERENCE]


def spec(contract: NumericContract) -> DecoderModuleSpec:
    """The tests' programs (the f32-reference one, built by the CLI, also has a decode context of 32, and no
    top-k or sampling entries: the mlx-cuda-v1 one's are the ones tested)."""
    contexts = (32, CAPACITY) if contract is F32_REFERENCE else ()
    top_k = 0 if contract is F32_REFERENCE else TOP_LOGPROBS
    prompt_batches = () if contract is F32_REFERENCE else (3,)
    return DecoderModuleSpec(
        CFG,
        contract,
        SLOTS,
        CAPACITY,
        prompts=(32,),
        batches=(4,),
        contexts=contexts,
        top_k=top_k,
        prompt_batches=prompt_batches,
        sampling=contract is not F32_REFERENCE,
    )


@pytest.fixture(scope="module")
def model():
    return H.make_model(CFG, seed=7)


@pytest.fixture(scope="module")
def checkpoint(model, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("decoder-program-ckpt")
    H.write_checkpoint(model, CFG, directory)
    return directory


@pytest.fixture(scope="module")
def weights(checkpoint) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, F32) for k, v in read_decoder_weights(checkpoint, CFG).items()}


#: The README's command, building the f32-reference program of the tests (with two decode context buckets).
CLI = [
    sys.executable,
    "-m",
    "gemma3n_iree.emitters.cli",
    "--stage",
    "decoder",
    "--target",
    "llvm-cpu",
    "--contract",
    "f32-reference",
    "--slots",
    str(SLOTS),
    "--capacity",
    str(CAPACITY),
    "--prompt",
    "32",
    "--batch",
    "4",
    "--top-logprobs",
    "0",
    "--context",
    "32",
    "--context",
    str(CAPACITY),
]


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory, checkpoint) -> dict[str, Path]:
    """The mlx-cuda-v1 program through the artifact cache, and at the same time the f32-reference program
    through `emit-gemma3n --stage decoder` (the compiler releases the GIL; CI has two cores)."""
    folder = tmp_path_factory.mktemp("decoder-artifacts")
    cli_out = folder / "decoder-f32.vmfb"
    cli = subprocess.Popen(
        CLI + ["--checkpoint", str(checkpoint), "-o", str(cli_out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    mlx = build_decoder_artifact(ArtifactCache(folder), spec(MLX_CUDA_V1), parse_target("llvm-cpu")).path
    _, err = cli.communicate(timeout=900)
    assert cli.returncode == 0, err
    (folder / "emit-gemma3n.log").write_text(err)
    return {MLX_CUDA_V1.name: mlx, F32_REFERENCE.name: cli_out}


@pytest.fixture
def session(artifacts, checkpoint):
    """A fresh program (an empty cache) per test and contract."""

    def load(contract: NumericContract) -> DecoderSession:
        return DecoderSession.from_checkpoint(artifacts[contract.name], checkpoint, CFG)

    return load


class Emulated:
    """The emulation's logits [1 + steps, V] of a prefill and decode steps, the tied head's input row of each
    call (to judge a flipped logit), and its cache after the last call. Its cache has the test programs'
    capacity; a program of another capacity reads as many full-layer columns as its context, and invisible
    trailing columns change no sum (decoder_ops.block_sum)."""

    def __init__(self, c: NumericContract, w, prompt=PROMPT, continuation=CONTINUATION, slot: int = 2) -> None:
        self.c, self.w = c, w
        self.cache = KVCache(KVCacheLayout.for_config(CFG, c, SLOTS, CAPACITY))
        logits, heads = [], []
        for i in range(len(continuation) + 1):
            stages: dict = {}
            if i == 0:
                out = DEC.prefill(
                    c, CFG, w, self.cache, slot, *DEC.text_inputs(c, CFG, w, prompt), fn=D.IREE_MATH, stages=stages
                )
            else:
                text, ple = DEC.token_rows(CFG, w, [continuation[i - 1]])
                out = DEC.decode_step(
                    c, CFG, w, self.cache, [slot], [len(prompt) + i - 1], text, ple, fn=D.IREE_MATH, stages=stages
                )[0]
            streams = stages[f"layers.{CFG.num_hidden_layers - 1}.output"][:, -1:]
            heads.append(D.rms_norm(c, CFG, D.altup_collapse(c, CFG, w, streams), w["norm"])[0])
            logits.append(out)
        self.logits, self.heads = np.stack(logits), heads

    def softcap(self, x: np.ndarray) -> np.ndarray:
        c, cap = self.c, CFG.final_logit_softcapping
        divided = D.rnd(c, np.asarray(x, F32) / D.E.contract_scalar(c, cap), "softcap.divide")
        return D.rnd(
            c, D.rnd(c, D.IREE_MATH.tanh(divided), "softcap.tanh") * D.E.contract_scalar(c, cap), "softcap.scale"
        )

    def assert_close(self, got: np.ndarray, step: int) -> None:
        """Logits of call `step`: under a rounding contract bit for bit but for head flips inside the envelope."""
        want = self.logits[step]
        if not self.c.round_bf16:
            assert relative_l2(got, want) <= 1e-5 and rel_max(got, want) <= 1e-5, step
            return
        differ = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
        assert len(differ) <= 1e-4 * got.size, f"call {step}: {len(differ)} of {got.size} logits differ"
        for v in differ:
            allowed = self.softcap(envelope_bf16(self.heads[step], self.w["embed_tokens"][v]))
            assert np.any(allowed.view(np.uint32) == got[v : v + 1].view(np.uint32)), (step, int(v), got[v], allowed)


def run_program(s: DecoderSession, w, prompt=PROMPT, continuation=CONTINUATION, slot: int = 2) -> np.ndarray:
    c = s.contract
    logits = [s.prefill(slot, *DEC.text_inputs(c, CFG, w, prompt))]
    for i, token in enumerate(continuation):
        logits.append(s.decode([slot], [len(prompt) + i], [token])[0])
    return np.stack(logits)


def rel_max(got, want) -> float:
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


def assert_same_program_logits(c: NumericContract, got: np.ndarray, want: np.ndarray) -> None:
    """Two of the program's own results for the same position (different entries): under a rounding contract
    equal but for head flips (at most 0.01 % of the logits, each at most a few BF16 steps); under
    f32-reference within the F32 bound."""
    if c.round_bf16:
        differ = got.view(np.uint32) != want.view(np.uint32)
        assert differ.mean() <= 1e-4, f"{differ.sum()} of {differ.size} logits differ"
        assert np.abs(got - want).max() <= 2**-6 * np.abs(want).max()
    else:
        assert relative_l2(got, want) <= 1e-5 and rel_max(got, want) <= 1e-5


def assert_cache_close(c: NumericContract, program: dict[str, np.ndarray], cache: KVCache, slot: int) -> None:
    for layer in range(cache.layout.layers):
        for name, ours in (("keys", cache.keys[layer][slot]), ("values", cache.values[layer][slot])):
            got = program[f"{name}_{layer}"]
            if c.round_bf16:
                np.testing.assert_array_equal(got, ours, err_msg=f"{name} of layer {layer}")
            else:
                assert relative_l2(got, ours) <= 1e-5 and rel_max(got, ours) <= 1e-5, (name, layer)


# ---------------------------------------------------------------------------------------------- the emulation
@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_prefill_and_decode_steps_equal_the_emulation(session, weights, contract):
    """A 13-token prompt (padded into the 32-position prefill entry) and 8 decode steps: logits of every call
    and the slot's KV cache after the prefill and after the last step."""
    s = session(contract)
    first = Emulated(contract, weights, continuation=[])
    first.assert_close(s.prefill(2, *DEC.text_inputs(contract, CFG, weights, PROMPT)), 0)
    assert_cache_close(contract, s.cache(2), first.cache, 2)
    want = Emulated(contract, weights)
    for i, token in enumerate(CONTINUATION):
        want.assert_close(s.decode([2], [len(PROMPT) + i], [token])[0], 1 + i)
    assert_cache_close(contract, s.cache(2), want.cache, 2)
    for other in (0, 1, 3):  # nothing else was written
        assert all(not v.any() for v in s.cache(other).values())


def test_f32_reference_program_matches_the_float64_oracle_and_transformers(session, weights, model):
    got = run_program(session(F32_REFERENCE), weights, slot=0)
    oracle = DecoderF64(CFG.to_config_json()["text_config"], H.checkpoint_tensors(model))
    state: dict = {}
    want = [oracle.prefill_ids(np.array(PROMPT), state)[-1]]
    want += [oracle.step_ids(np.array([t]), len(PROMPT) + i, state)[-1] for i, t in enumerate(CONTINUATION)]
    hf = H.run_cached(model, PROMPT, CONTINUATION)
    for step in range(len(got)):
        assert relative_l2(got[step], want[step]) <= 1e-5 and rel_max(got[step], want[step]) <= 1e-5, step
        assert relative_l2(got[step], hf["logits"][step]) <= 1e-5, step


def test_f32_reference_cache_matches_transformers(session, weights, model):
    s = session(F32_REFERENCE)
    run_program(s, weights, slot=1)
    hf = H.run_cached(model, PROMPT, CONTINUATION)["caches"][-1]
    cache = s.cache(1)
    total = len(PROMPT) + len(CONTINUATION)
    for layer, (keys, values) in hf.items():
        positions = range(total - len(keys), total)
        rows = [p % CFG.sliding_window if CFG.is_sliding(layer) else p for p in positions]
        assert relative_l2(cache[f"keys_{layer}"][rows], keys) <= 1e-5, layer
        assert relative_l2(cache[f"values_{layer}"][rows], values) <= 1e-5, layer


# ---------------------------------------------------------------------------------------------- program properties
@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_prefill_plus_decode_steps_equals_a_longer_prefill(session, weights, contract):
    steps = run_program(session(contract), weights, slot=3)
    s = session(contract)
    for k in (1, 4, len(CONTINUATION)):
        longer = s.prefill(0, *DEC.text_inputs(contract, CFG, weights, PROMPT + CONTINUATION[:k]))
        assert_same_program_logits(contract, longer, steps[k])


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_batched_decode_equals_each_sequence_alone(session, weights, contract):
    """Three sequences at different positions in slots 0, 1, 3 (the batch-4 entry, one padding row writing the
    scratch slot) against each sequence decoded alone (the batch-1 entry) in another program instance; slot 2,
    not in the batch, keeps its rows."""
    prompts = {0: PROMPT, 1: [2, 9, 8, 7, 6, 5, 4, 3], 3: PROMPT[:5] + CONTINUATION}
    together, alone = session(contract), session(contract)
    for s in (together, alone):
        for slot, prompt in prompts.items():
            s.prefill(slot, *DEC.text_inputs(contract, CFG, weights, prompt))
        s.prefill(2, *DEC.text_inputs(contract, CFG, weights, [2, 5]))
    untouched = together.cache(2)
    for step, tokens in enumerate(([4368, 17, 5], [107, 18, 6], [302, 600, 7])):
        slots = list(prompts)
        positions = [len(prompts[s]) + step for s in slots]
        batch = together.decode(slots, positions, tokens)
        for b, slot in enumerate(slots):
            single = alone.decode([slot], [positions[b]], [tokens[b]])[0]
            np.testing.assert_array_equal(batch[b], single, err_msg=f"step {step}, slot {slot}")
    for slot in prompts:
        for name, value in together.cache(slot).items():
            np.testing.assert_array_equal(value, alone.cache(slot)[name])
    for name, value in together.cache(2).items():
        np.testing.assert_array_equal(value, untouched[name])


def test_batched_prefill_equals_each_prompt_alone(session, weights):
    """Prompts of 13, 8 and 1 positions into slots 3, 0 and 1 in one call of the 3-prompt entry, then two prompts
    (a padding prompt writing the scratch slot): each prompt's selection (token, log-probability, top 5, logits)
    and cache rows are the bits of the same prompt prefilled alone, a decode step after them too, and slot 2,
    in neither call, keeps its rows."""
    c = MLX_CUDA_V1
    together, alone = session(c), session(c)
    for program in (together, alone):
        program.prefill(2, *DEC.text_inputs(c, CFG, weights, [2, 5]))
    untouched = together.cache(2)
    assert together.prefill_widths == (1, 3)
    for prompts in ({3: PROMPT, 0: [2, 9, 8, 7, 6, 5, 4, 3], 1: [2]}, {1: PROMPT[:6], 3: CONTINUATION}):
        inputs = [DEC.text_inputs(c, CFG, weights, prompt) for prompt in prompts.values()]
        got = together.prefill_batch_greedy(
            list(prompts), [e for e, _ in inputs], [t for _, t in inputs], top_k=5, logits=True
        )
        assert len(got) == len(prompts)
        for row, (slot, (embeds, pli)) in enumerate(zip(prompts, inputs)):
            want = alone.prefill_greedy(slot, embeds, pli, top_k=5, logits=True)
            for field in dataclasses.fields(want):
                mine, theirs = getattr(got, field.name), getattr(want, field.name)
                if theirs is None:  # a field no call here asked for (the sampled token)
                    assert mine is None, field.name
                    continue
                np.testing.assert_array_equal(mine[row], theirs[0], err_msg=f"{field.name} of slot {slot}")
            for name, value in together.cache(slot).items():
                np.testing.assert_array_equal(value, alone.cache(slot)[name], err_msg=f"{name} of slot {slot}")
    step = [together.decode([1, 3], [6, len(CONTINUATION)], [4368, 17]), alone.decode([1, 3], [6, 8], [4368, 17])]
    np.testing.assert_array_equal(*step)
    for name, value in together.cache(2).items():
        np.testing.assert_array_equal(value, untouched[name])
    with pytest.raises(SessionError, match="number of prompts 4 exceeds"):
        together.prefill_batch_greedy([0, 1, 2, 3], *zip(*[inputs[0]] * 4))
    with pytest.raises(SessionError, match="writes each slot once"):
        together.prefill_batch_greedy([0, 0], *zip(*[inputs[0]] * 2))


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_a_reused_slot_exposes_no_stale_rows(session, weights, contract):
    """A slot that held a longer sequence (past several windows, up to position 43), prefilled again: the same
    bits as a fresh program's slot."""
    fresh = run_program(session(contract), weights, slot=1)
    s = session(contract)
    long_prompt = [2] + CONTINUATION * 3 + PROMPT[:7]  # 32 positions
    s.prefill(1, *DEC.text_inputs(contract, CFG, weights, long_prompt))
    for i in range(12):  # positions 32..43
        s.decode([1], [len(long_prompt) + i], [300 + i])
    np.testing.assert_array_equal(run_program(s, weights, slot=1), fresh)


def test_a_step_writes_only_the_rows_that_may_land(session, weights):
    """The batch-4 entry called directly, past the session's checks, with slot 1 named twice, a position at the
    capacity (slot 2) and a slot outside the program (9): the first row of slot 1 lands as if it were alone, the
    repeated row, the position past the capacity and the foreign slot write scratch rows only, so every other
    slot's rows are unchanged. This is what keeps the cache scatters' `unique_indices` promise true whatever a
    caller passes (`decoder_entry.mlir.j2`'s `decode_indices`)."""
    c = MLX_CUDA_V1
    s, alone = session(c), session(c)
    for program in (s, alone):
        for slot in range(SLOTS):
            program.prefill(slot, *DEC.text_inputs(c, CFG, weights, PROMPT[: 5 + slot]))
    before = {slot: s.cache(slot) for slot in range(SLOTS)}
    slots, positions, tokens = [1, 1, 2, 9], [6, 6, CAPACITY, 0], [4368, 107, 302, 303]
    text, ple = s.token_rows(tokens)
    at = np.array(positions, np.int32)
    got = s.invoke(s.decodes[(CAPACITY, 4)], ("logits",), np.array(slots, np.int32), at, text, ple, *s.rope_tables(at))
    want = alone.decode([1], [6], [4368])[0]
    np.testing.assert_array_equal(got["logits"][0], want)
    for name, value in s.cache(1).items():
        np.testing.assert_array_equal(value, alone.cache(1)[name], err_msg=name)
    for slot in (0, 2, 3):
        for name, value in s.cache(slot).items():
            np.testing.assert_array_equal(value, before[slot][name], err_msg=f"slot {slot}: {name}")


def test_host_inputs_are_the_contracts_rows(session, checkpoint):
    """What a call's host side hands the program, made from tables kept between calls: each position's RoPE rows
    equal `decoder_ops.rope_tables` computed for that position alone (inside the cache and past it), and the token
    rows gathered in BF16 are the contract's F32 gathers rounded to BF16, bit for bit."""
    s = session(MLX_CUDA_V1)
    cfg = s.cfg
    for positions in ([0], [CAPACITY - 1, 0, 17, 17], list(range(CAPACITY)), [3, CAPACITY, CAPACITY + 40]):
        at = np.array(positions, np.int32)
        want = []
        for theta in (cfg.rope_theta_sliding, cfg.rope_theta_full):
            want += [np.asarray(t, F32) for t in D.rope_tables(s.contract, theta, cfg.head_dim, at)]
        got = s.rope_tables(at)
        assert len(got) == len(want) == 4
        for g, w in zip(got, want):
            assert g.dtype == F32 and g.flags.c_contiguous
            np.testing.assert_array_equal(g.view(np.uint32), w.view(np.uint32), err_msg=str(positions))
    tables = read_decoder_weights(checkpoint, CFG)
    ids = [0, 5, CFG.vocab_size_per_layer_input - 1, CFG.vocab_size_per_layer_input, CFG.vocab_size - 1]
    text, ple = s.token_rows(ids)
    want_text, want_ple = DEC.token_rows(CFG, tables, ids)
    for g, w in ((text, want_text), (ple, want_ple)):
        assert g.dtype.name == "bfloat16"
        np.testing.assert_array_equal(g.view(np.uint16), w.astype(g.dtype).view(np.uint16))


def test_greedy_f32_reference_equals_generate(session, weights, model):
    """32 new tokens, EOS ignored on both sides."""
    want = H.generate_tokens(model, PROMPT, 32)
    streamed: list[int] = []
    tokens, logits = greedy(
        session(F32_REFERENCE),
        0,
        *DEC.text_inputs(F32_REFERENCE, CFG, weights, PROMPT),
        32,
        stop_ids=(),
        on_token=streamed.append,
    )
    assert tokens == want == streamed and len(logits) == 32


# ---------------------------------------------------------------------------------------------- in place
def test_kv_cache_is_updated_in_place(tmp_path):
    """At IREE's stream level the cache is one device resource held by its global (loaded `immutable`: the
    buffer never changes), every dispatch that touches it binds it read-write or read-only, and nothing copies,
    fills or reallocates it: a call writes its rows into the resident buffer. On a three-layer cut of the tiny
    configuration (a sliding and a full layer owning K/V, a sliding layer sharing them) to keep the compile
    short; the emitter does the same for every configuration."""
    from iree.compiler.tools import compile_str

    three = dataclasses.replace(
        CFG,
        num_hidden_layers=3,
        intermediate_sizes=CFG.intermediate_sizes[:3],
        layer_types=(CFG.layer_types[0], CFG.layer_types[4], CFG.layer_types[0]),
        activation_sparsity=CFG.activation_sparsity[:3],
        num_kv_shared_layers=1,
    )
    s = DecoderModuleSpec(three, MLX_CUDA_V1, 2, 16, prompts=(8,), batches=(1, 2))
    layout = s.kv_layout
    size = (s.slots + 1) * sum(2 * layout.rows(layer) for layer in range(layout.layers)) * three.kv_width * 2
    flags = list(parse_target("llvm-cpu").flags()) + ["--compile-to=stream"]
    text = compile_str(emit_decoder_module(s), extra_args=flags).decode()
    assert re.findall(r"util\.global private @(\w+) : !stream\.resource<variable>", text) == ["kv_cache"]
    loads = re.findall(r"util\.global\.load (\w+ )?@kv_cache : ", text)
    assert loads and all(mode == "immutable " for mode in loads)
    assert re.search(rf"stream\.cmd\.fill [^\n]*\[%c0 for %c{size}\]", text)  # the initializer's zeros, once
    bindings = re.findall(r"(ro|rw|wo) %(\w+)\[%c0 for %c(\d+)\] : !stream\.resource<variable>", text)
    assert bindings and {mode for mode, _, n in bindings if int(n) == size} <= {"ro", "rw"}
    assert "rw" in {mode for mode, _, _ in bindings}
    for op in ("stream.cmd.copy", "stream.async.copy", "stream.async.clone"):
        assert not re.search(rf"{op}[^\n]*!stream\.resource<variable>", text), op
    assert len(re.findall(r"stream\.cmd\.fill[^\n]*!stream\.resource<variable>", text)) == 1


# ---------------------------------------------------------------------------------------------- errors
def test_session_refuses_bad_calls(session, weights):
    s = session(MLX_CUDA_V1)
    embeds, pli = DEC.text_inputs(MLX_CUDA_V1, CFG, weights, PROMPT)
    with pytest.raises(SessionError, match="slot 4 is outside the program's 4 slots"):
        s.prefill(4, embeds, pli)
    with pytest.raises(SessionError, match="prompt length 40 exceeds the program's largest bucket 32"):
        s.prefill(0, np.zeros((40, CFG.hidden_size), F32), np.zeros((40,) + pli.shape[1:], F32))
    with pytest.raises(SessionError, match=r"per_layer_inputs must be \[13, 10, 16\]"):
        s.prefill(0, embeds, pli[:, :-1])
    with pytest.raises(SessionError, match="each slot once"):
        s.decode([1, 1], [3, 4], [5, 6])
    with pytest.raises(SessionError, match="position 64 is outside the KV cache capacity 64"):
        s.decode([1], [64], [5])
    with pytest.raises(SessionError, match="slot 4 is outside"):
        s.decode([0, 1, 2, 3, 4], [1] * 5, [5] * 5)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        s.decode([0], [1], [CFG.vocab_size])


def test_spec_refuses_buckets_it_cannot_serve():
    with pytest.raises(DecoderBucketError, match="prompt bucket 128 must be in"):
        DecoderModuleSpec(CFG, MLX_CUDA_V1, 2, 64, prompts=(128,), batches=(1,))
    with pytest.raises(DecoderBucketError, match="batch 4 must be in"):
        DecoderModuleSpec(CFG, MLX_CUDA_V1, 2, 64, prompts=(16,), batches=(4,))
    with pytest.raises(DecoderBucketError, match="max_position_embeddings"):
        DecoderModuleSpec(CFG, MLX_CUDA_V1, 2, 1024, prompts=(16,), batches=(1,))
    a, b = spec(MLX_CUDA_V1), spec(F32_REFERENCE)
    assert a.identity() != b.identity() and a.identity() == spec(MLX_CUDA_V1).identity()
    assert [e.symbol for e in a.entry_points] == [
        "decoder_prefill_c64_s4_t32",
        "decoder_prefill_batch_c64_s4_t32_p3",
        "decoder_decode_c64_s4_x64_b4",
        "decoder_top_k_b1_k20",
        "decoder_top_k_b3_k20",
        "decoder_top_k_b4_k20",
        "decoder_sample_b1",
        "decoder_sample_b3",
        "decoder_sample_b4",
        "decoder_cache_c64_s4",
    ]
    with pytest.raises(DecoderBucketError, match="prompt batch 5 must be in"):
        DecoderModuleSpec(CFG, MLX_CUDA_V1, 4, 64, prompts=(16,), batches=(1,), prompt_batches=(5,))
    with pytest.raises(DecoderBucketError, match="must be >= 2"):
        DecoderModuleSpec(CFG, MLX_CUDA_V1, 4, 64, prompts=(16,), batches=(1,), prompt_batches=(1, 2))
    with pytest.raises(DecoderBucketError, match="top-k 262401 must be in"):
        DecoderModuleSpec(CFG, MLX_CUDA_V1, 2, 64, prompts=(16,), batches=(1,), top_k=CFG.vocab_size + 1)
    assert spec(F32_REFERENCE).context_buckets == (32, 64)


def test_emit_gemma3n_stage_decoder(artifacts, checkpoint, tmp_path):
    """The README's command built the f32-reference program the other tests ran (across both decode context
    buckets: positions 13..20 read 32 cache rows of the full layers, the greedy run's later ones 64); its
    entries are the spec's, and options it cannot serve are one-line errors."""
    log = (artifacts[F32_REFERENCE.name].parent / "emit-gemma3n.log").read_text()
    names = [e.symbol for e in spec(F32_REFERENCE).entry_points]
    assert names == [
        "decoder_prefill_c64_s4_t32",
        "decoder_decode_c64_s4_x32_b4",
        "decoder_decode_c64_s4_x64_b4",
        "decoder_cache_c64_s4",
    ]
    assert "entries: " + ", ".join(names) in log
    s = DecoderSession.from_checkpoint(artifacts[F32_REFERENCE.name], checkpoint)
    assert (s.info.slots, s.info.capacity, s.info.prompts, s.info.contexts, s.info.batches) == (
        4,
        64,
        (32,),
        (32, 64),
        (4,),
    )
    bad = subprocess.run(
        CLI[:-4] + ["--batch", "8", "--checkpoint", str(checkpoint), "-o", str(tmp_path / "x.vmfb")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert bad.returncode != 0 and "batch 8 must be in [1, 4]" in bad.stderr


# ---------------------------------------------------------------------------------------------- token selection
def assert_device_selection(selection: D.TokenSelection, rows: int) -> None:
    """A call's selection, read back with the logits it was computed from: the tokens are numpy's argmax of those
    logits, the top 20 a stable sort of them (ties to the lower index), the log-probabilities within the F32
    bound of float64 (test_token_select.assert_selection), and all of it the emulation of the selection
    (IREE's exp and log) on the same logits, bit for bit."""
    logits = selection.logits
    assert logits is not None and logits.shape == (rows, CFG.vocab_size) and len(selection) == rows
    assert (selection.nonfinite == 0).all() and (selection.first_nonfinite == CFG.vocab_size).all()
    assert_selection(logits, selection.token, selection.logprob, selection.top_tokens, selection.top_logprobs)
    want = D.token_select(logits, D.IREE_MATH)
    np.testing.assert_array_equal(selection.token, want.token)
    np.testing.assert_array_equal(selection.logprob.view(np.uint32), want.logprob.view(np.uint32))
    ids, logprobs = D.token_top_k(logits, TOP_LOGPROBS, D.IREE_MATH)
    np.testing.assert_array_equal(selection.top_tokens, ids)
    np.testing.assert_array_equal(selection.top_logprobs.view(np.uint32), logprobs.view(np.uint32))


def test_the_device_selection_is_that_of_the_entrys_own_logits(session, weights):
    """Four prefills (their one row, the top 20 by the batch-1 top-k entry on the [V] logits as they lie on the
    device) and decode steps of 1, 2, 3 and 4 sequences through the width-4 entry (padding rows dropped), each
    call's selection read back with its logits."""
    c = MLX_CUDA_V1
    s = session(c)
    prompts = {0: PROMPT, 1: [2, 9, 8, 7, 6, 5, 4, 3], 2: PROMPT[:5], 3: CONTINUATION}
    last, position = {}, {}
    for slot, prompt in prompts.items():
        selection = s.prefill_greedy(slot, *DEC.text_inputs(c, CFG, weights, prompt), top_k=TOP_LOGPROBS, logits=True)
        assert_device_selection(selection, 1)
        last[slot], position[slot] = int(selection.token[0]), len(prompt)
    for width in (1, 2, 3, 4, 3):
        slots = [3, 1, 0, 2][:width]
        selection = s.decode_greedy(
            slots, [position[t] for t in slots], [last[t] for t in slots], top_k=TOP_LOGPROBS, logits=True
        )
        assert_device_selection(selection, width)
        for b, slot in enumerate(slots):
            last[slot], position[slot] = int(selection.token[b]), position[slot] + 1


def test_greedy_calls_copy_back_only_the_selection(session, weights):
    """`prefill_greedy` / `decode_greedy` without logits: the same tokens as argmax of `prefill` / `decode`'s logits
    (another program instance, the same calls), no host buffer is ever staged for the entries' logits result,
    and what does come back is the selection's 16 bytes a row (with a top 5: 8 x 20 more; the top-k entry is
    fed the logits on the device). A k past the program's, or on a program without top-k entries, is refused."""
    c = MLX_CUDA_V1
    greedy_s, logits_s = session(c), session(c)
    inputs = DEC.text_inputs(c, CFG, weights, PROMPT)
    first = greedy_s.prefill_greedy(1, *inputs)
    assert first.top_tokens is None and first.logits is None
    assert first.token[0] == np.argmax(logits_s.prefill(1, *inputs))
    logits_s.prefill(2, *DEC.text_inputs(c, CFG, weights, [2, 5]))
    greedy_s.prefill_greedy(2, *DEC.text_inputs(c, CFG, weights, [2, 5]))
    token = int(first.token[0])
    for i in range(4):
        step = greedy_s.decode_greedy([1, 2], [len(PROMPT) + i, 2 + i], [token, 7], top_k=5 if i % 2 else 0)
        want = np.argmax(logits_s.decode([1, 2], [len(PROMPT) + i, 2 + i], [token, 7]), axis=-1)
        np.testing.assert_array_equal(step.token, want)
        assert (step.top_tokens is not None) == bool(i % 2) and (i % 2 == 0 or step.top_tokens.shape == (2, 5))
        token = int(step.token[0])
    staged = {key: slot for key, slot in greedy_s._staging._slots.items() if key[1] == "result"}  # noqa: SLF001
    selection_entries = {name for name in greedy_s.prefills.values()} | set(greedy_s.decodes.values())
    assert staged and all(index != 0 for name, _, index in staged if name in selection_entries)  # 0: the logits
    assert max(slot.view.nbytes for slot in staged.values()) == 4 * TOP_LOGPROBS * 4  # [4, 20] top ids, their logprobs
    with pytest.raises(SessionError, match="top_k 21 is outside the program's top-k entries"):
        greedy_s.decode_greedy([1], [30], [5], top_k=21)
    with pytest.raises(SessionError, match="built without top-k entries"):
        session(F32_REFERENCE).prefill_greedy(0, *DEC.text_inputs(F32_REFERENCE, CFG, weights, PROMPT), top_k=1)


def test_the_engine_on_the_program_selects_on_the_device(session, weights):
    """`GenerationEngine` over the program (its calls are `prefill_greedy` / `decode_greedy`, top 5): the tokens
    `greedy` picks from the logits it reads back, the log-probabilities within the F32 bound of `token_logprob`
    (float64) on those logits, the top 5 their stable sort, and the stop probability of the prefill's logits
    (the one call whose logits the engine reads, for a request with log probabilities)."""
    from synthetic_text import build_test_tokenizer

    from gemma3n_iree.runtime.text.generate import GenerationEngine, GenerationRequest, probability_of, token_logprob

    c, stops = MLX_CUDA_V1, frozenset(CFG.eos_token_ids)
    inputs = DEC.text_inputs(c, CFG, weights, PROMPT)
    tokens, logits = greedy(session(c), 0, *inputs, 8, stop_ids=stops)
    engine = GenerationEngine(session(c), build_test_tokenizer())
    seq = engine.submit(GenerationRequest(*inputs, 8, stops, logprobs=True, top_logprobs=5))
    list(engine.run())
    result = engine.result(seq)
    assert result.tokens == tokens
    for step, row in enumerate(logits):
        exact = token_logprob(row, tokens[step])
        assert abs(result.logprobs[step] - exact) <= D.logprob_error_bound(CFG.vocab_size, exact)
        order = np.lexsort((np.arange(CFG.vocab_size), -row.astype(np.float64)))[:5]
        assert [t for t, _ in result.top_logprobs[step]] == order.tolist()
    assert result.first_stop_probability == probability_of(logits[0], sorted(stops))


# ---------------------------------------------------------------------------------------------- sampling
def assert_device_draws(selection: D.TokenSelection, sample: SampleRows) -> None:
    """A call's drawn tokens, read back with the logits they were drawn from: the contract's sampler (IREE's exp)
    on those logits, token and log-probability bit for bit, for the rows that sample."""
    want = sample.draw(selection.logits, D.IREE_MATH)
    rows = [i for i, p in enumerate(sample.params) if p is not None]
    assert selection.sampled is not None and selection.sampled_logprob is not None
    np.testing.assert_array_equal(selection.sampled[rows], want.token[rows])
    logprob = sampled_logprob(want.logit, want.top_logit, selection.logprob)
    np.testing.assert_array_equal(selection.sampled_logprob[rows].view(np.uint32), logprob[rows].view(np.uint32))


def test_the_device_draws_are_the_contracts_on_the_entrys_own_logits(session, weights):
    """Sampled tokens of a prefill (the batch-1 sample entry on the [V] logits as they lie on the device), a
    batched prefill of 3 and decode steps of 1 to 4 rows (greedy rows among them), with the top 20 alongside:
    each call's draws are the contract's on the logits read back with them."""
    c = MLX_CUDA_V1
    s = session(c)
    hot = SamplingParams(1.3, 64, 1.0, seed=11)
    prompts = {0: PROMPT, 1: [2, 9, 8, 7, 6, 5, 4, 3], 2: PROMPT[:5], 3: CONTINUATION}
    first = SampleRows((hot,), (0,))
    selection = s.prefill_greedy(0, *DEC.text_inputs(c, CFG, weights, PROMPT), logits=True, sample=first)
    assert_device_draws(selection, first)
    inputs = [DEC.text_inputs(c, CFG, weights, prompts[slot]) for slot in (1, 2, 3)]
    batch = SampleRows((SamplingParams(0.8, 40, 0.95, seed=3), None, hot), (0, 0, 0))
    selection = s.prefill_batch_greedy(
        [1, 2, 3], [e for e, _ in inputs], [t for _, t in inputs], logits=True, sample=batch, top_k=TOP_LOGPROBS
    )
    assert_device_draws(selection, batch)
    drawn = 0
    for width in (1, 2, 3, 4):
        slots = [3, 1, 0, 2][:width]
        params = tuple(
            None if slot == 1 else SamplingParams(1.0 + slot / 4, 64 - slot, 1.0, seed=slot) for slot in slots
        )
        step = SampleRows(params, tuple(range(width)))
        selection = s.decode_greedy(
            slots, [len(prompts[t]) + width for t in slots], [5] * width, top_k=TOP_LOGPROBS, logits=True, sample=step
        )
        assert_device_draws(selection, step)
        drawn += int((selection.sampled != selection.token)[[p is not None for p in params]].sum())
    assert drawn  # some draws were not the greedy token


def test_a_sampled_sequence_draws_the_same_tokens_whatever_the_batch(session, weights):
    """The engine over the program: a sampled request alone, then submitted with a greedy one and a sampled one
    of another seed (one decode call for all three): the same tokens; the greedy one's tokens are `greedy`'s; the
    same seed again gives the same tokens, another seed others. A program without sampling entries refuses a
    sampled request when it is submitted."""
    from synthetic_text import build_test_tokenizer

    from gemma3n_iree.runtime.text.generate import GenerationEngine, GenerationError, GenerationRequest

    c, stops = MLX_CUDA_V1, frozenset()
    inputs = DEC.text_inputs(c, CFG, weights, PROMPT)
    other = DEC.text_inputs(c, CFG, weights, CONTINUATION)

    def run(*requests: GenerationRequest) -> list[list[int]]:
        engine = GenerationEngine(session(c), build_test_tokenizer())
        seqs = [engine.submit(r) for r in requests]
        list(engine.run())
        return [engine.result(q).tokens for q in seqs]

    hot = SamplingParams(1.5, 64, 0.95, seed=2024)
    sampled = GenerationRequest(*inputs, 10, stops, logprobs=True, sampling=hot)
    (alone,) = run(sampled)
    together = run(
        GenerationRequest(*other, 6, stops),
        sampled,
        GenerationRequest(*other, 12, stops, sampling=SamplingParams(0.7, 20, 0.9, seed=1)),
    )
    assert together[1] == alone and run(sampled) == [alone]
    assert together[0] == greedy(session(c), 0, *other, 6, stop_ids=stops)[0]
    (reseeded,) = run(GenerationRequest(*inputs, 10, stops, sampling=SamplingParams(1.5, 64, 0.95, seed=7)))
    assert reseeded != alone and alone != greedy(session(c), 0, *inputs, 10, stop_ids=stops)[0]
    engine = GenerationEngine(session(F32_REFERENCE), build_test_tokenizer())
    with pytest.raises(GenerationError, match="greedily only"):
        engine.submit(GenerationRequest(*inputs, 4, stops, sampling=hot))


def test_the_profile_script_times_greedy_and_sampled_steps(artifacts, checkpoint, tmp_path):
    """`scripts/decoder_profile.py` on this program's local-task dry run (its kernel profile needs cuda): each
    width's greedy and sampled steps timed, and the prompt bucket's prefill with its host phases, with the digests
    of what they returned; a second run on a fresh session draws the same tokens (every draw is its seed's and
    counter's) and prefills the same logits."""
    import json
    import runpy

    script = runpy.run_path(str(Path(__file__).parent.parent / "scripts" / "decoder_profile.py"), run_name="profile")
    mlx = str(artifacts[MLX_CUDA_V1.name])
    reports = []
    for run in ("first", "second"):
        out = tmp_path / f"{run}.json"
        script["main"](["--artifact", mlx, "--checkpoint", str(checkpoint), "--widths", "1", "4", "--steps", "2",
                        "--prompts", "32", "--device", "local-task", "--out", str(out)])  # fmt: skip
        reports.append(json.loads(out.read_text()))
    [prefill], [again] = (report["prompts"] for report in reports)
    assert prefill["prompt"] == 32 and prefill["outputs_sha256"] == again["outputs_sha256"]
    phases = prefill["host_phases_ms"]
    assert phases["prepare"] > 0 and phases["call"] > 0 and phases["wall"] >= phases["prepare"] + phases["call"]
    first, second = (report["widths"] for report in reports)
    assert [line["width"] for line in first] == [1, 4]
    for a, b in zip(first, second):
        assert a["greedy_on_device"]["median_ms"] > 0 and a["sampled_on_device"]["median_ms"] > 0
        assert len(a["sampled_on_device"]["outputs_sha256"]) == 64
        assert a["sampled_on_device"]["outputs_sha256"] == b["sampled_on_device"]["outputs_sha256"]
        assert a["outputs_sha256"] == b["outputs_sha256"]
