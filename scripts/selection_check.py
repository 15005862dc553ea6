"""Does a decoder program's token selection on the device agree with its own logits? (run on the GPU machine)

    python scripts/selection_check.py --artifact decoder.vmfb --checkpoint DIR [--device cuda]

For random prompts of the program's first prompt bucket: `prefill_greedy` (with and without the top-k entry),
`prefill_batch_greedy` of three prompts against each prompt alone, and `decode_greedy` at every decode width,
each with the logits brought back, compared with `host_selection` of those logits (token, its log-probability
within 1e-5, top-k ids). One JSON line per check: `agree`, and the values where they do not. Exit status 1 when
any check disagrees or raises: a wrong id on the device reaches the tokenizer as an out-of-range integer.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

import numpy as np


def _compare(name: str, device, host) -> dict[str, object]:  # noqa: ANN001
    agree = bool(
        np.array_equal(device.token, host.token)
        and np.allclose(device.logprob, host.logprob, rtol=0, atol=1e-5)
        and not device.nonfinite.any()
        and (device.top_tokens is None or np.array_equal(device.top_tokens, host.top_tokens))
    )
    line: dict[str, object] = {"check": name, "agree": agree, "token": device.token.tolist()}
    if not agree:
        line.update(
            host_token=host.token.tolist(),
            logprob=device.logprob.tolist(),
            host_logprob=host.logprob.tolist(),
            nonfinite=device.nonfinite.tolist(),
            top_tokens=None if device.top_tokens is None else device.top_tokens[:, :5].tolist(),
            host_top_tokens=None if host.top_tokens is None else host.top_tokens[:, :5].tolist(),
        )
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--artifact", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args(argv)

    from gemma3n_iree.runtime.text.decoder import DecoderSession
    from gemma3n_iree.runtime.text.generate import host_selection

    session = DecoderSession.from_checkpoint(args.artifact, args.checkpoint, device=args.device)
    cfg, info = session.cfg, session.info
    rng = np.random.default_rng(0)
    length = min(info.prompts) - 3

    def prompt(n: int) -> tuple[np.ndarray, np.ndarray]:
        e = (0.05 * rng.standard_normal((n, cfg.hidden_size))).astype(np.float32)
        t = (0.05 * rng.standard_normal((n, cfg.num_hidden_layers, cfg.hidden_size_per_layer_input))).astype(np.float32)
        return e, t

    prompts = [prompt(length - i) for i in range(3)]
    ok = True

    def check(name: str, run) -> object:  # noqa: ANN001
        nonlocal ok
        try:
            device = run()
            line = _compare(
                name,
                device,
                host_selection(
                    device.logits, 0 if device.top_tokens is None else device.top_tokens.shape[1], keep_logits=True
                ),
            )
        except Exception as exc:  # noqa: BLE001 — every failure is a finding of this check
            device, line = None, {"check": name, "agree": False, "error": f"{type(exc).__name__}: {exc}"}
            traceback.print_exc()
        ok = ok and bool(line["agree"])
        print(json.dumps(line), flush=True)
        return device

    alone = [
        check(f"prefill_greedy slot {i}", lambda i=i: session.prefill_greedy(i, *prompts[i], logits=True))
        for i in range(3)
    ]
    for i in range(3):  # the selection alone, as `transcribe` and `serve` ask for it: the same ids as with the logits
        try:
            ids = session.prefill_greedy(i, *prompts[i]).token.tolist()
            same = alone[i] is not None and ids == alone[i].token.tolist()
            line = {"check": f"prefill_greedy slot {i} without logits", "agree": same, "token": ids}
        except Exception as exc:  # noqa: BLE001
            line = {"check": f"prefill_greedy slot {i} without logits", "agree": False, "error": repr(exc)}
        ok = ok and bool(line["agree"])
        print(json.dumps(line), flush=True)
    if info.top_k:
        check("prefill_greedy top-k", lambda: session.prefill_greedy(0, *prompts[0], top_k=info.top_k, logits=True))
    if max(info.prompt_batches, default=1) > 1:
        batch = check(
            "prefill_batch_greedy 3 prompts",
            lambda: session.prefill_batch_greedy(
                [3, 4, 5], [p[0] for p in prompts], [p[1] for p in prompts], logits=True
            ),
        )
        if batch is not None and all(a is not None for a in alone):
            same = all(np.array_equal(batch.logits[i], alone[i].logits[0]) for i in range(3))
            ok = ok and same
            print(json.dumps({"check": "batched prefill rows = each prompt alone", "agree": same}), flush=True)
    for width in info.batches:
        slots = list(range(width))
        check(
            f"decode_greedy width {width}",
            lambda slots=slots, width=width: session.decode_greedy(
                slots, [length] * width, [1000 + 7 * b for b in slots], top_k=info.top_k, logits=True
            ),
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
