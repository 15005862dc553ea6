"""Audio containers: which one a byte string is, and how much sample data its header declares.

libsndfile decodes the samples a file holds and says nothing when its header declares more: a WAV,
AIFF, AU, NIST ... file cut short decodes, without an error, to a shorter recording.  This module
reads each container's own declaration of its length, so the decoder (`runtime/audio/decode.py`) can refuse
such a file and say how much is missing.  Everything here is a pure function of the bytes (a
``bytes``/``bytearray`` upload or a read-only ``mmap`` of a file), never a decode.

One table, :data:`CONTAINERS`, is the single source of truth for every container: its name, how it
is recognised (leading bytes) and how its declared extent is read.  Containers are of four kinds:

* **declared in bytes** (compared before decoding): RIFF/WAVE (and WAVEX, RIFX), RF64/BW64 (the
  ``ds64`` size), Sony Wave64, AIFF/AIFC and IFF 8SVX/16SV (``SSND``/``BODY`` chunk), CAF (``data``
  chunk), Sun AU, NIST SPHERE (``sample_count`` x channels x bytes), AVR, Akai MPC 2000, MATLAB 4/5
  (matrix sizes), Creative VOC (block sizes), Psion WVE, HTK and FastTracker XI;
* **declared in frames**: MIDI SDS (the dump header), MPEG audio (``runtime/audio/mpeg.py``: the Xing/VBRI
  frame count against the frames the stream holds) and FLAC (STREAMINFO's total samples, compared
  with the decoded frames: only decoding tells how many a cut FLAC stream holds);
* **Ogg**: a stream is complete when its last page is whole and flagged end-of-stream;
* **not recorded**: IRCAM/BICSF, PVF and PAF headers carry no length at all, and streaming writers
  store an unknown size (0 or 0xFFFFFFFF in RIFF/AU, -1 in CAF, 0 total samples in FLAC).  Such input
  decodes completely -- everything present is used -- but a cut on a frame boundary cannot be
  told from a shorter recording; :class:`Extent` says so (``declared is None``) and the decoder
  reports it with the result.

A declared size of 0 or all ones is "unknown" (what a writer that cannot seek back leaves), never
"empty".  Sizes are compared in the unit the header uses; trailing metadata after the samples
(``LIST``, ID3 ...) is not sample data, so a cut there loses nothing and is not an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .extent import Buffer, Extent, Inconsistent, Truncated, id3v2_end
from .mpeg import parse_header, scan, stream_extent

__all__ = ["Buffer", "Container", "CONTAINERS", "Extent", "Inconsistent", "MPEG", "Truncated", "sniff"]


UNKNOWN_SIZES = (0, 0xFFFFFFFF)


def _complete(where: str) -> Extent:
    """A container whose structure was walked to its end and found whole."""
    return Extent("bytes", 0, 0, where)


def _u16(b: Buffer, at: int, order: str) -> int:
    return int.from_bytes(b[at : at + 2], order)


def _u32(b: Buffer, at: int, order: str) -> int:
    return int.from_bytes(b[at : at + 4], order)


def _u64(b: Buffer, at: int, order: str) -> int:
    return int.from_bytes(b[at : at + 8], order)


def _need(b: Buffer, end: int, what: str) -> None:
    if end > len(b):
        raise Truncated(f"the file ends inside its {what} ({len(b)} of at least {end} bytes)")


def _bytes(declared: int | None, b: Buffer, start: int, where: str) -> Extent:
    """Sample data from `start` to the end of the input, against what the header declares."""
    return Extent("bytes", declared, max(0, len(b) - start), where)


# ---------------------------------------------------------------------------------------------- chunked formats


def _walk_chunks(
    b: Buffer, start: int, order: str, target: bytes, size_bytes: int = 4, align: int = 2, end: int | None = None
) -> tuple[int, int] | None:
    """(offset of `target`'s body, its declared size) in a flat list of id+size chunks; None when a chunk
    before it overruns the container's own declared `end` (a corrupt file: libsndfile's to judge)."""
    pos = start
    while True:
        _need(b, pos + 4 + size_bytes, f"chunk headers (no {target.decode(errors='replace')!r} chunk yet)")
        cid = bytes(b[pos : pos + 4])
        size = int.from_bytes(b[pos + 4 : pos + 4 + size_bytes], order)
        body = pos + 4 + size_bytes
        if cid == target:
            return body, size
        if end is not None and body + size > end:
            return None
        pos = body + size + (-size % align)


def _declared_end(size: int) -> int | None:
    """Where a RIFF/FORM container ends by its own header (None: unknown)."""
    return None if size in UNKNOWN_SIZES else size + 8


def _riff(b: Buffer) -> Extent:
    order = "big" if b[:4] == b"RIFX" else "little"
    found = _walk_chunks(b, 12, order, b"data", end=_declared_end(_u32(b, 4, order)))
    if found is None:
        return _bytes(None, b, len(b), "the data chunk's size")
    body, size = found
    if bytes(b[:4]) in (b"RF64", b"BW64") and size == 0xFFFFFFFF:
        ds64 = _walk_chunks(b, 12, order, b"ds64")
        assert ds64 is not None
        _need(b, ds64[0] + 16, "ds64 chunk")
        return _bytes(_u64(b, ds64[0] + 8, order) or None, b, body, "the ds64 chunk's data size")
    return _bytes(None if size in UNKNOWN_SIZES else size, b, body, "the data chunk's size")


_W64_DATA = b"data\xf3\xac\xd3\x11\x8c\xd1\x00\xc0\x4f\x8e\xdb\x8a"


def _w64(b: Buffer) -> Extent:
    pos = 40  # riff GUID, 64-bit size, wave GUID
    while True:
        _need(b, pos + 24, "chunk headers (no data chunk yet)")
        size = _u64(b, pos + 16, "little")  # includes the 24-byte chunk header
        if bytes(b[pos : pos + 16]) == _W64_DATA:
            return _bytes(size - 24 if size >= 24 else None, b, pos + 24, "the data chunk's size")
        if size < 24:
            raise Truncated(f"a chunk at byte {pos} has an invalid size {size}")
        pos += size + (-size % 8)


def _iff(b: Buffer) -> Extent:
    aiff = bytes(b[8:12]) in (b"AIFF", b"AIFC")
    found = _walk_chunks(b, 12, "big", b"SSND" if aiff else b"BODY", end=_declared_end(_u32(b, 4, "big")))
    if found is None:
        return _bytes(None, b, len(b), "the sample chunk's size")
    body, size = found
    if not aiff:  # 8SVX / 16SV
        return _bytes(size, b, body, "the BODY chunk's size")
    _need(b, body + 8, "SSND chunk header")
    offset = _u32(b, body, "big")
    return _bytes(size - 8 - offset, b, body + 8 + offset, "the SSND chunk's size")


def _caf(b: Buffer) -> Extent:
    found = _walk_chunks(b, 8, "big", b"data", size_bytes=8, align=1)
    assert found is not None  # no declared end: the walk finds the chunk or raises
    body, size = found
    if size == 0xFFFFFFFFFFFFFFFF:  # -1: the data chunk runs to the end of the file
        return _bytes(None, b, body + 4, "the data chunk's size")
    return _bytes(size - 4, b, body + 4, "the data chunk's size")  # 4 bytes: the edit count


# ---------------------------------------------------------------------------------------------- fixed headers


def _au(b: Buffer) -> Extent:
    order = "big" if b[:4] == b".snd" else "little"
    _need(b, 24, "header")
    offset, size = _u32(b, 4, order), _u32(b, 8, order)
    return _bytes(None if size == 0xFFFFFFFF else size, b, offset, "the header's data size")


_NIST_FIELD = re.compile(rb"^(\w+) -(?:i|s\d+) (\d+)\s*$", re.M)  # integers, also written as strings


def _nist(b: Buffer) -> Extent:
    _need(b, 16, "header")
    header_size = int(bytes(b[8:16]).strip() or b"0")
    _need(b, header_size, "header")
    fields = {k.decode(): int(v) for k, v in _NIST_FIELD.findall(bytes(b[:header_size]))}
    if not {"sample_count", "channel_count", "sample_n_bytes"} <= fields.keys():
        return _bytes(None, b, header_size, "sample_count")
    declared = fields["sample_count"] * fields["channel_count"] * fields["sample_n_bytes"]
    return _bytes(declared, b, header_size, "sample_count x channel_count x sample_n_bytes")


def _avr(b: Buffer) -> Extent:
    _need(b, 128, "header")
    channels = 2 if _u16(b, 12, "big") else 1
    declared = _u32(b, 26, "big") * channels * (_u16(b, 14, "big") // 8)
    return _bytes(declared, b, 128, "the header's frame count")


def _mpc2k(b: Buffer) -> Extent:
    _need(b, 42, "header")
    channels = 2 if b[21] else 1
    return _bytes(_u32(b, 30, "little") * channels * 2, b, 42, "the header's frame count")


def _wve(b: Buffer) -> Extent:
    _need(b, 32, "header")
    return _bytes(_u32(b, 18, "big"), b, 32, "the header's data length")


def _htk(b: Buffer) -> Extent:
    _need(b, 12, "header")
    return _bytes(_u32(b, 0, "big") * _u16(b, 8, "big"), b, 12, "the header's sample count")


def _sds(b: Buffer) -> Extent:
    """MIDI sample dump: a 21-byte dump header, then 127-byte packets of 120 data bytes."""
    _need(b, 21, "dump header")
    per_word = -(-b[6] // 7)  # 7-bit bytes per sample
    words = b[10] | (b[11] << 7) | (b[12] << 14)  # three 7-bit bytes, least significant first
    present = (len(b) - 21) // 127 * (120 // per_word)
    return Extent("frames", words, min(present, words), "the dump header's sample length")


def _xi(b: Buffer) -> Extent:
    """FastTracker 2 instrument: sample headers (40 bytes each) at 298, then the samples' data."""
    _need(b, 298, "instrument header")
    count = _u16(b, 296, "little")
    _need(b, 298 + 40 * count, "sample headers")
    declared = sum(_u32(b, 298 + 40 * i, "little") for i in range(count))
    return _bytes(declared or None, b, 298 + 40 * count, "the sample headers' lengths")


_MAT4_SIZES = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}


def _mat4(b: Buffer) -> Extent:
    """Level 4 MAT: matrices one after another; the samples are the last one (after `samplerate`)."""
    pos, last = 0, None
    while pos < len(b):
        _need(b, pos + 20, "matrix header")
        order = "little" if _u32(b, pos, "little") < 10000 else "big"
        mtype, rows, cols, imag, namelen = (_u32(b, pos + 4 * i, order) for i in range(5))
        element = _MAT4_SIZES.get((mtype // 10) % 10, 8)
        start = pos + 20 + namelen
        size = rows * cols * element * (2 if imag else 1)
        last = _bytes(size, b, start, "the matrix dimensions")
        if start + size >= len(b):
            return last
        pos = start + size
    assert last is not None
    return last


_MI_MATRIX = 14


def _mat5(b: Buffer) -> Extent:
    """Level 5 MAT: a 128-byte header, then data elements (type, size, data padded to 8 bytes); a
    matrix element nests its own (flags, dimensions, name, then the samples).  The element that
    reaches the end of the input holds the samples."""
    _need(b, 128, "header")
    order = "little" if bytes(b[126:128]) == b"IM" else "big"
    pos = 128
    while True:
        _need(b, pos + 8, "data element header")
        kind = _u32(b, pos, order)
        if kind >> 16:  # small data element: 4 bytes of data inside its 8-byte header
            pos += 8
            continue
        size = _u32(b, pos + 4, order)
        if kind == _MI_MATRIX:
            pos += 8  # descend into the matrix's own elements
            continue
        end = pos + 8 + size + (-size % 8)
        if end >= len(b):  # the samples; their alignment padding may be absent
            return _bytes(size, b, pos + 8, "the data element's size")
        pos = end


def _voc(b: Buffer) -> Extent:
    """Creative VOC: typed blocks with 24-bit sizes after the header; type 0 ends the file."""
    _need(b, 22, "header")
    pos = _u16(b, 20, "little")
    while pos < len(b) and b[pos] != 0:
        _need(b, pos + 4, "block header")
        size = int.from_bytes(b[pos + 1 : pos + 4], "little")
        if pos + 4 + size > len(b):
            return _bytes(size, b, pos + 4, "a sound block's size")
        pos += 4 + size
    return _complete("the block sizes")


def _flac(b: Buffer) -> Extent:
    start = id3v2_end(b)
    _need(b, start + 4 + 4 + 34, "STREAMINFO block")
    info = start + 8
    total = int.from_bytes(b[info + 13 : info + 18], "big") & ((1 << 36) - 1)
    return Extent("frames", total or None, None, "STREAMINFO's total samples")


def _not_recorded(where: str) -> Callable[[Buffer], Extent]:
    def extent(b: Buffer) -> Extent:
        return Extent("bytes", None, len(b), where)

    return extent


# ---------------------------------------------------------------------------------------------- Ogg


def _ogg(b: Buffer) -> Extent:
    """Walk the pages: each must be whole, and the last one must carry the end-of-stream flag."""
    pos, flags = 0, 0
    while pos < len(b):
        if bytes(b[pos : pos + 4]) != b"OggS":
            raise Truncated(f"byte {pos} is not the start of an Ogg page")
        _need(b, pos + 27, "last Ogg page header")
        segments = b[pos + 26]
        _need(b, pos + 27 + segments, "last Ogg page's segment table")
        body = sum(b[pos + 27 : pos + 27 + segments])
        end = pos + 27 + segments + body
        if end > len(b):
            raise Truncated(f"the last Ogg page is cut off ({len(b) - pos} of its {end - pos} bytes arrived)")
        flags, pos = b[pos + 5], end
    if not flags & 0x04:
        raise Truncated("the Ogg stream ends without its end-of-stream page")
    return _complete("the Ogg pages")


# ---------------------------------------------------------------------------------------------- MPEG audio


def _mpeg(b: Buffer) -> Extent:
    return stream_extent(scan(b))


# ---------------------------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Container:
    """A container format: ``name`` for messages, ``matches(buffer)`` (its signature), and
    ``extent(buffer)`` (None: libsndfile cannot decode this container at all)."""

    name: str
    matches: Callable[[Buffer], bool]
    extent: Callable[[Buffer], Extent] | None


def _at(offset: int, *magics: bytes) -> Callable[[Buffer], bool]:
    return lambda b: any(bytes(b[offset : offset + len(m)]) == m for m in magics)


def _is_flac(b: Buffer) -> bool:
    start = id3v2_end(b)
    return bytes(b[start : start + 4]) == b"fLaC"


def _is_mpeg(b: Buffer) -> bool:
    """A frame header first, or ID3v2 tags in front of something that is not FLAC (as libsndfile decides)."""
    return (id3v2_end(b) > 0 and not _is_flac(b)) or parse_header(b, 0) is not None


def _is_htk(b: Buffer) -> bool:  # no magic: a 2-byte WAVEFORM (parameter kind 0) header
    return len(b) >= 12 and bytes(b[8:12]) == b"\x00\x02\x00\x00" and 0 < _u32(b, 4, "big") < 10**7


MPEG = Container("MPEG audio (MP3)", _is_mpeg, _mpeg)  # the decoder also walks its frames (runtime/audio/mpeg.py)

# Order matters only where signatures overlap: the magic-less HTK test comes last.
CONTAINERS: tuple[Container, ...] = (
    Container("RIFF/WAVE", _at(0, b"RIFF", b"RIFX"), _riff),
    Container("RF64/WAVE", _at(0, b"RF64", b"BW64"), _riff),
    Container("Wave64", _at(0, b"riff\x2e\x91\xcf\x11"), _w64),
    Container("AIFF", lambda b: bytes(b[:4]) == b"FORM" and bytes(b[8:12]) in (b"AIFF", b"AIFC"), _iff),
    Container("IFF 8SVX", lambda b: bytes(b[:4]) == b"FORM" and bytes(b[8:12]) in (b"8SVX", b"16SV"), _iff),
    Container("CAF", _at(0, b"caff"), _caf),
    Container("AU", _at(0, b".snd", b"dns."), _au),
    Container("NIST SPHERE", _at(0, b"NIST_1A"), _nist),
    Container("AVR", _at(0, b"2BIT"), _avr),
    Container("MPC 2000", _at(0, b"\x01\x04"), _mpc2k),
    Container("MATLAB 5", _at(0, b"MATLAB 5.0 MAT-file"), _mat5),
    Container("Psion WVE", _at(0, b"ALawSoundFile**"), _wve),
    Container("Creative VOC", _at(0, b"Creative Voice File\x1a"), _voc),
    Container("MIDI SDS", _at(0, b"\xf0\x7e"), _sds),
    Container("FastTracker XI", _at(0, b"Extended Instrument: "), _xi),
    Container(
        "IRCAM", lambda b: bytes(b[:2]) == b"\x64\xa3" or bytes(b[2:4]) == b"\xa3\x64", _not_recorded("IRCAM header")
    ),
    Container("PVF", _at(0, b"PVF1"), _not_recorded("PVF header")),
    Container("PAF", _at(0, b" paf", b"fap "), _not_recorded("PAF header")),
    Container("FLAC", _is_flac, _flac),
    Container("Ogg", _at(0, b"OggS"), _ogg),
    # containers libsndfile cannot decode, recognised to say so
    Container("MP4/M4A (AAC or ALAC)", _at(4, b"ftyp"), None),
    Container("Matroska/WebM", _at(0, b"\x1aE\xdf\xa3"), None),
    Container("AMR", _at(0, b"#!AMR"), None),
    Container("ASF/WMA", _at(0, b"0&\xb2u\x8ef\xcf\x11"), None),
    Container("AAC (ADTS)", lambda b: len(b) >= 2 and b[0] == 0xFF and (b[1] & 0xF6) == 0xF0, None),
    MPEG,
    Container(
        "MATLAB 4",
        lambda b: bytes(b[:4]) in (b"\x00\x00\x00\x00", b"\x00\x00\x03\xe8") and bytes(b[20:30]) == b"samplerate",
        _mat4,
    ),
    Container("HTK", _is_htk, _htk),
)


def sniff(b: Buffer) -> Container | None:
    """The container whose signature the input starts with, or None."""
    return next((c for c in CONTAINERS if c.matches(b)), None)
