"""Emit every module variant to a folder, and compare two such folders: proof that a refactor kept them.

    python scripts/emit_matrix.py dump before/              # on the old commit
    python scripts/emit_matrix.py dump after/               # on the new one
    python scripts/emit_matrix.py compare before/ after/ [--ignore-reflection gemma3n.stage ...]

(`dump --only audio/tiny` emits only the cases whose name starts so.)

The matrix: the audio stage (plain and stage-output builds) under every contract, on cuda sm_90,
cuda sm_80 and llvm-cpu, with every kernel choice the target and contract accept (a refusal is
recorded as such and must stay a refusal); the mlx layout with 4- and 8-bit affine-quantized weights;
the prefill stage under every contract, both layouts, with and without stage outputs; each for the
tiny and the E4B configuration. No GPU and no checkpoint are needed (no weights are read).

For every case it records the module text `iree-compile` receives (after inlining) and the text of
every template fragment by symbol (before inlining, so a change in one specialisation shows even
where the inliner would hide it). Texts are stored once per SHA-256 under `texts/`; `index.json`
maps each case to its hashes. A linked kernel is named by the absolute path of its PTX file, which
depends on where the package is installed, so `path = ".../<name>.ptx"` is written as
`path = "<ptx>/<name>.ptx"` and the SHA-256 of every PTX file a case links is recorded instead.

`compare` checks that both folders hold the same cases with the same texts and PTX hashes; with
`--ignore-reflection KEY`, a `KEY = "..."` entry of an `iree.reflection` dictionary is removed from
the second folder's texts first (an attribute a change adds on purpose), and it checks that every
entry point of the second folder does carry such a key. Module texts must then be identical.
Fragment texts may differ only in their type aliases (`!rows = tensor<...>`, which the parser
resolves and the printed module never shows): they must be identical once every alias is replaced by
its type and the alias lines are dropped; such fragments are counted.  With `--ignore-blank-lines`
(a template whose whitespace changed on purpose), fragments may also differ in blank lines, which the
parser skips; those are counted separately.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from gemma3n_iree.contracts.policy import CONTRACTS, NumericContract
from gemma3n_iree.emitters import render
from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import Target, parse_target
from gemma3n_iree.emitters.kernels import KernelChoiceError, select_kernels
from gemma3n_iree.emitters.lowering import lowering_for
from gemma3n_iree.emitters.prefill import PrefillModuleSpec, emit_prefill_module
from gemma3n_iree.model.audio_config import AudioConfig, builtin_config
from gemma3n_iree.model.audio_weights import HF_LAYOUT, MLX_LAYOUT, WeightLayout, audio_weight_specs
from gemma3n_iree.model.text_config import builtin_text_config

TARGETS = {"cuda-sm_90": ("cuda", "sm_90"), "cuda-sm_80": ("cuda", "sm_80"), "llvm-cpu": ("llvm-cpu", None)}
KERNEL_CHOICES = ("auto", "iree", "triton-sm90")
#: (frame buckets, clips) of the audio stage and (capacities, clips) of the prefill, per configuration
AUDIO_ENTRIES = {"tiny": ((100, 200), (1, 2)), "e4b": ((256, 1024, 2997), (1, 8))}
PREFILL_ENTRIES = {"tiny": ((256, 512), (0, 1, 2)), "e4b": ((512, 1024), (0, 1, 2))}
QUANTIZATIONS = ((4, 64), (8, 64))
_PTX_PATH = re.compile(r'path = "([^"]*/)?([^"/]+\.ptx)"')

Case = tuple[str, Callable[[], str]]


def _audio(
    cfg: AudioConfig,
    policy: NumericContract,
    buckets: tuple[int, ...],
    clips: tuple[int, ...],
    layout: WeightLayout,
    stages: bool,
    choice: str,
    target: Target,
    quantization: tuple[int, int] | None = None,
    quantized: frozenset[str] = frozenset(),
) -> str:
    return emit_audio_module(
        AudioModuleSpec(
            cfg,
            policy,
            buckets,
            clips,
            layout,
            stages,
            quantization,
            quantized,
            kernels=select_kernels(choice, target, policy),
            lowering=lowering_for(target, policy),
        )
    )


def _cases() -> Iterator[Case]:
    for config_name in ("tiny", "e4b"):
        cfg = builtin_config(config_name)
        frames, clips = AUDIO_ENTRIES[config_name]
        for contract in sorted(CONTRACTS):
            for target_name, (backend, arch) in TARGETS.items():
                for choice in KERNEL_CHOICES:
                    for stages in (False, True):
                        build = "stages" if stages else "plain"
                        name = f"audio/{config_name}/{contract}/{target_name}/{choice}/{build}"
                        yield (
                            name,
                            partial(
                                _audio,
                                cfg,
                                CONTRACTS[contract],
                                frames,
                                clips,
                                HF_LAYOUT,
                                stages,
                                choice,
                                parse_target(backend, arch),
                            ),
                        )
        quantizable = frozenset(w.logical for w in audio_weight_specs(cfg, MLX_LAYOUT) if len(w.shape) == 2)
        for bits, group in QUANTIZATIONS:
            for target_name, (backend, arch) in TARGETS.items():
                name = f"audio-quantized/{config_name}/b{bits}g{group}/{target_name}/auto"
                yield (
                    name,
                    partial(
                        _audio,
                        cfg,
                        CONTRACTS["mlx-cuda-v1"],
                        frames,
                        clips,
                        MLX_LAYOUT,
                        False,
                        "auto",
                        parse_target(backend, arch),
                        (bits, group),
                        quantizable,
                    ),
                )
        text = builtin_text_config(config_name)
        capacities, audio_clips = PREFILL_ENTRIES[config_name]
        for contract in sorted(CONTRACTS):
            for layout in (HF_LAYOUT, MLX_LAYOUT):
                for stages in (False, True):
                    name = f"prefill/{config_name}/{contract}/{layout.name}/{'stages' if stages else 'plain'}"
                    spec = PrefillModuleSpec(cfg, text, CONTRACTS[contract], capacities, audio_clips, layout, stages)
                    yield name, partial(emit_prefill_module, spec)


def _normalized(text: str, ptx: dict[str, str]) -> str:
    """The text with every PTX path made installation-independent; records each file's SHA-256."""

    def relative(match: re.Match) -> str:
        folder, name = match.group(1) or "", match.group(2)
        ptx[name] = hashlib.sha256(Path(folder + name).read_bytes()).hexdigest()
        return f'path = "<ptx>/{name}"'

    return _PTX_PATH.sub(relative, text)


def _store(out: Path, text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()
    path = out / "texts" / f"{digest}.mlir"
    if not path.exists():
        path.write_text(text)
    return digest


def dump(out: Path, only: str = "") -> None:
    (out / "texts").mkdir(parents=True, exist_ok=True)
    captured: list[dict[str, str]] = []
    original_build = render.ModuleBuilder.build

    def capturing_build(self: render.ModuleBuilder, *args: object, **kwargs: object) -> str:
        captured.append({key: fragment.text for key, fragment in self.fragments.items()})
        return original_build(self, *args, **kwargs)

    render.ModuleBuilder.build = capturing_build  # type: ignore[method-assign]
    index: dict[str, dict[str, object]] = {}
    try:
        for number, (name, emit) in enumerate((c for c in _cases() if c[0].startswith(only)), 1):
            captured.clear()
            try:
                module = emit()
            except KernelChoiceError as exc:
                index[name] = {"refused": str(exc)}
                print(f"{number:4d} {name}: refused", file=sys.stderr)
                continue
            ptx: dict[str, str] = {}
            (fragments,) = captured
            listing = "".join(f"// ---- {key}\n{_normalized(fragments[key], ptx)}" for key in sorted(fragments))
            index[name] = {
                "module": _store(out, _normalized(module, ptx)),
                "fragments": _store(out, listing),
                "ptx": dict(sorted(ptx.items())),
            }
            print(
                f"{number:4d} {name}: {len(module) / 1e6:.2f} MB, {len(fragments)} fragments, {len(ptx)} PTX files",
                file=sys.stderr,
            )
    finally:
        render.ModuleBuilder.build = original_build  # type: ignore[method-assign]
    (out / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    print(f"{len(index)} cases in {out}", file=sys.stderr)


def _without_reflection_keys(text: str, keys: list[str]) -> tuple[str, int]:
    """`text` without the `KEY = "..."` entries of its reflection dictionaries, and how many
    entry-point lines had none of the keys."""
    missing = 0
    for line in text.splitlines():
        if keys and "iree.reflection" in line and line.lstrip().startswith("func.func @"):
            missing += not any(f'{key} = "' in line for key in keys)
    for key in keys:
        text = re.sub(
            rf'(, )?{re.escape(key)} = "[^"]*"(, )?', lambda m: ", " if m.group(1) and m.group(2) else "", text
        )
    return text, missing


_ALIAS_LINE = re.compile(r"^(![A-Za-z_]\w*) = (.*)\n", re.M)
_ALIAS_USE = re.compile(r"![A-Za-z_]\w*")


def _aliases_expanded(text: str) -> str:
    """The fragments' text with every type alias replaced by its type (per fragment) and its line dropped."""

    def expand(fragment: str) -> str:
        aliases = dict(_ALIAS_LINE.findall(fragment))
        body = _ALIAS_LINE.sub("", fragment)
        return _ALIAS_USE.sub(lambda m: aliases.get(m.group(0), m.group(0)), body)

    parts = re.split(r"(?m)^(// ---- .*\n)", text)
    return "".join(expand(p) if not p.startswith("// ---- ") else p for p in parts)


def _without_blank_lines(text: str) -> str:
    return "".join(line for line in text.splitlines(True) if line.strip())


def compare(before: Path, after: Path, ignore: list[str], ignore_blank_lines: bool = False) -> int:
    old, new = (json.loads((d / "index.json").read_text()) for d in (before, after))
    failures = []
    if set(old) != set(new):
        failures.append(
            f"cases differ: only before {sorted(set(old) - set(new))}, only after {sorted(set(new) - set(old))}"
        )
    stripped_cases = aliased_cases = blank_cases = 0
    for name in sorted(set(old) & set(new)):
        a, b = old[name], new[name]
        if "refused" in a or "refused" in b:
            if a != b:
                failures.append(f"{name}: {a} became {b}")
            continue
        if a["ptx"] != b["ptx"]:
            failures.append(f"{name}: linked PTX files differ: {a['ptx']} vs {b['ptx']}")
        for part in ("module", "fragments"):
            got, missing = _without_reflection_keys((after / "texts" / f"{b[part]}.mlir").read_text(), ignore)
            if missing:
                failures.append(f"{name} ({part}): {missing} entry point(s) without any of {ignore}")
            if a[part] == b[part]:
                continue
            want = (before / "texts" / f"{a[part]}.mlir").read_text()
            if got != want and part == "fragments" and _aliases_expanded(got) == _aliases_expanded(want):
                aliased_cases += 1
            elif (
                got != want
                and part == "fragments"
                and ignore_blank_lines
                and _without_blank_lines(_aliases_expanded(got)) == _without_blank_lines(_aliases_expanded(want))
            ):
                blank_cases += 1
            elif got != want:
                diff = "".join(
                    list(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "before", "after", n=2))[:40]
                )
                failures.append(f"{name} ({part}) differs:\n{diff}")
            elif part == "module":
                stripped_cases += 1
    for failure in failures:
        print(failure)
    refused = sum("refused" in v for v in old.values())
    print(
        f"{len(old)} cases ({refused} refusals): modules of {stripped_cases} equal only after removing {ignore}; "
        f"fragments of {aliased_cases} equal only up to type aliases"
        + (f", of {blank_cases} only up to blank lines" if ignore_blank_lines else "")
        + f"; {len(failures)} differences"
    )
    return 1 if failures else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    emit = sub.add_parser("dump", help="emit every case into a folder")
    emit.add_argument("out", type=Path)
    emit.add_argument("--only", default="", metavar="PREFIX", help="only the cases whose name starts with PREFIX")
    cmp = sub.add_parser("compare", help="compare two dumps")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    cmp.add_argument(
        "--ignore-reflection",
        action="append",
        default=[],
        metavar="KEY",
        help="an iree.reflection key the second dump adds on purpose (repeatable)",
    )
    cmp.add_argument(
        "--ignore-blank-lines",
        action="store_true",
        help="fragment texts may differ in blank lines (modules must still be identical)",
    )
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.out, args.only)
    else:
        sys.exit(compare(args.before, args.after, args.ignore_reflection, args.ignore_blank_lines))


if __name__ == "__main__":
    main()
