"""Streaming detokenization (`runtime/text/detokenize.py`): the streamed pieces concatenate to `decode(all ids)`.

Property-tested with hypothesis on three tokenizers: one with Gemma's pipeline (BPE with byte fallback, "▁"
spaces, `Replace`/`ByteFallback`/`Fuse`; tests/gemma_like_tokenizer.py), one with the Metaspace pipeline
(a start-of-text space the decoder strips) and the project's WordLevel test tokenizer.  The id strategies
favour what breaks naive streaming: UTF-8 lead and continuation bytes as byte-fallback tokens (characters
split across tokens, runs that turn invalid), multi-byte pieces, "▁" pieces, special tokens (skipped or
not) and ids no token has.
"""

from __future__ import annotations

import pytest
from gemma_like_tokenizer import BYTE_BASE, PIECES, SPECIALS, build
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_text import build_test_tokenizer

from gemma3n_iree.runtime.text.detokenize import TextStream

TOKENIZERS = {"gemma": build(), "metaspace": build(metaspace=True), "wordlevel": build_test_tokenizer()}
_UTF8_BYTES = [0x41, 0x20, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0xE6, 0x97, 0xA5, 0xFA, 0xFF]


def _ids(name: str) -> st.SearchStrategy[list[int]]:
    tok = TOKENIZERS[name]
    if name == "wordlevel":
        pool = st.sampled_from(sorted(tok.get_vocab().values()) + [999_999])
    else:
        pool = st.one_of(
            st.sampled_from([BYTE_BASE + b for b in _UTF8_BYTES]),
            st.integers(BYTE_BASE, BYTE_BASE + 255),
            st.sampled_from([1000 + 3 * i for i in range(len(PIECES))]),
            st.sampled_from(sorted(SPECIALS.values())),
            st.sampled_from([5, 1001, 999_999]),
        )  # ids without a token
    return st.lists(pool, max_size=24)


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@pytest.mark.parametrize("skip", [True, False], ids=["skip-special", "keep-special"])
def test_streamed_pieces_concatenate_to_the_decoded_text(name, skip):
    tok = TOKENIZERS[name]

    @settings(max_examples=400, deadline=None)
    @given(_ids(name))
    def check(ids):
        stream = TextStream(tok, skip_special_tokens=skip)
        pieces = [stream.push(t) for t in ids] + [stream.finish()]
        assert "".join(pieces) == tok.decode(ids, skip_special_tokens=skip)
        assert stream.text == "".join(pieces) and stream.ids == ids

    check()


def test_a_character_split_over_byte_tokens_is_emitted_once_complete():
    tok = TOKENIZERS["gemma"]
    stream = TextStream(tok)
    euro = [BYTE_BASE + b for b in "€".encode()]
    assert [stream.push(t) for t in euro] == ["", "", ""]  # a byte run may go on: held back
    assert stream.push(tok.token_to_id("▁the")) == "€ the"
    assert stream.finish() == ""


def test_an_unfinished_character_is_flushed_as_decode_shows_it():
    tok = TOKENIZERS["gemma"]
    stream = TextStream(tok)
    ids = [tok.token_to_id("a"), BYTE_BASE + 0xE2, BYTE_BASE + 0x82]
    assert "".join(stream.push(t) for t in ids) == "a"
    assert stream.finish() == "\ufffd\ufffd" and stream.text == tok.decode(ids)


def test_special_tokens_are_skipped_or_kept():
    tok = TOKENIZERS["gemma"]
    ids = [tok.token_to_id("▁the"), SPECIALS["<end_of_turn>"]]
    assert TextStream(tok).extend(ids) == " the"
    assert TextStream(tok, skip_special_tokens=False).extend(ids) == " the<end_of_turn>"
