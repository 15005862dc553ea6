"""A small tokenizer with Gemma's decoding pipeline, for the streaming-detokenization tests.

Gemma's `tokenizer.json` (transformers' `GemmaTokenizer`): a BPE model with byte fallback (`<0x00>`..`<0xFF>`
tokens for bytes no piece covers), spaces normalized to "▁", and the decoder `Replace("▁", " ")`,
`ByteFallback`, `Fuse`.  Built here with `tokenizers` at a few hundred pieces: the special tokens at Gemma 3n's
ids, the 256 byte tokens, pieces with and without "▁", multi-byte characters as single pieces, and gaps in
the id space (ids no token has).  `metaspace=True` gives the other common SentencePiece pipeline
(`Metaspace` with a start-of-text space, stripped again by the decoder).
"""

from __future__ import annotations

from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers
from tokenizers.models import BPE

SPECIALS = {
    "<pad>": 0,
    "<eos>": 1,
    "<bos>": 2,
    "<unk>": 3,
    "<mask>": 4,
    "<start_of_turn>": 105,
    "<end_of_turn>": 106,
    "<start_of_audio>": 256000,
    "<end_of_audio>": 262272,
    "<audio_soft_token>": 262273,
}
BYTE_BASE = 238  # Gemma's byte tokens occupy a block of their own; here ids 238..493
PIECES = [
    "▁",
    "a",
    "b",
    "t",
    "h",
    "e",
    "▁t",
    "▁th",
    "▁the",
    "th",
    "he",
    "é",
    "▁é",
    "€",
    "▁€",
    "😀",
    "ñ",
    "\n",
    "\n\n",
    "▁a",
    "ab",
    "▁ab",
    "日",
    "本",
    "▁日本",
    "日本",
]


def build(metaspace: bool = False) -> Tokenizer:
    vocab = dict((k, v) for k, v in SPECIALS.items() if v < 1000)
    vocab.update({f"<0x{b:02X}>": BYTE_BASE + b for b in range(256)})
    for i, piece in enumerate(PIECES):
        vocab[piece] = 1000 + 3 * i  # gaps between pieces: ids without a token
    merges = [
        ("▁", "t"),
        ("▁t", "h"),
        ("▁th", "e"),
        ("t", "h"),
        ("h", "e"),
        ("▁", "é"),
        ("▁", "€"),
        ("▁", "a"),
        ("a", "b"),
        ("▁a", "b"),
        ("日", "本"),
        ("▁", "日本"),
        ("\n", "\n"),
    ]
    tokenizer = Tokenizer(BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    if metaspace:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    else:
        tokenizer.normalizer = normalizers.Replace(" ", "▁")
        tokenizer.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
        tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS])
    return tokenizer
