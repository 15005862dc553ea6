"""MPEG audio (MP3/MP2) streams: walk the frame headers to find the stream's true length.

libsndfile decodes MPEG audio with mpg123 and stops reading at ``mpg123_length``: exact when the
stream starts with a Xing/Info/VBRI frame (which counts the frames), otherwise an *estimate* from
the file size and the first frame's bitrate.  For variable-bitrate audio without such a header the
estimate is wrong either way: too short (the rest of the recording is silently dropped) or too long
(the decode ends early, which looks like a truncated file).  So:

* :func:`scan` walks every frame header from the first audio frame to the end (the way the decoder
  resynchronises: junk between frames is skipped, ID3v1/APE/Lyrics tags at the end are not audio),
  giving the number of whole frames, a last frame cut off by a truncation, and the frame count the
  Xing/VBRI header declares, if any;
* :func:`stream_extent` turns that into the container check of `runtime/audio/containers.py` (a cut frame,
  or fewer frames than Xing/VBRI declares, is a truncation; more frames than it declares is refused
  too, since libsndfile would stop at the declared count);
* :func:`length_header` builds the Xing frame the encoder did not write (frame count only: no
  encoder delay or padding, so mpg123 trims nothing, exactly as for the original stream), for the
  decoder to read in front of the stream -- it then reports the exact length and decodes every frame.

Free-format streams (bitrate index 0) have no frame length in their headers; they are decoded as
libsndfile does and reported as "length not recorded".
"""

from __future__ import annotations

from dataclasses import dataclass

from .extent import Buffer, Extent, Inconsistent, Truncated, id3v2_end

__all__ = ["FrameHeader", "Scan", "parse_header", "scan", "stream_extent", "length_header"]

# kbps by [version is MPEG-1][layer]; index 0 = free format, 15 = invalid
_BITRATES = {
    (True, 1): (0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
    (True, 2): (0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
    (True, 3): (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    (False, 1): (0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
    (False, 2): (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
    (False, 3): (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}  # by version bits
_TRAILING_TAGS = (b"TAG", b"APETAGEX", b"LYRICSBEGIN", b"ID3")
_RESYNC_LIMIT = 1 << 16  # how far past junk the walk looks for the next frame (as decoders do)


@dataclass(frozen=True)
class FrameHeader:
    version_bits: int  # 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    layer: int
    bitrate_index: int
    rate_index: int
    padding: int
    mono: bool
    raw: bytes  # the 4 header bytes

    @property
    def mpeg1(self) -> bool:
        return self.version_bits == 3

    @property
    def rate(self) -> int:
        return _RATES[self.version_bits][self.rate_index]

    @property
    def samples(self) -> int:
        """Samples per channel in one frame."""
        if self.layer == 1:
            return 384
        return 1152 if self.layer == 2 or self.mpeg1 else 576

    @property
    def length(self) -> int:
        """Bytes in the frame, header included."""
        kbps = _BITRATES[(self.mpeg1, self.layer)][self.bitrate_index]
        if self.layer == 1:
            return (12 * kbps * 1000 // self.rate + self.padding) * 4
        return self.samples // 8 * kbps * 1000 // self.rate + self.padding

    @property
    def side_info(self) -> int:
        """Bytes of Layer III side information after the header (where a Xing tag starts)."""
        if self.mpeg1:
            return 17 if self.mono else 32
        return 9 if self.mono else 17

    def same_stream(self, other: FrameHeader) -> bool:
        return (self.version_bits, self.layer, self.rate_index) == (other.version_bits, other.layer, other.rate_index)


def parse_header(b: Buffer, pos: int) -> FrameHeader | None:
    """The frame header at `pos`, or None when those 4 bytes are not a usable one (free format included)."""
    raw = bytes(b[pos : pos + 4])
    if len(raw) < 4 or raw[0] != 0xFF or (raw[1] & 0xE0) != 0xE0:
        return None
    version, layer_bits = (raw[1] >> 3) & 3, (raw[1] >> 1) & 3
    bitrate, rate, padding = raw[2] >> 4, (raw[2] >> 2) & 3, (raw[2] >> 1) & 1
    if version == 1 or layer_bits == 0 or bitrate in (0, 15) or rate == 3 or (raw[3] & 3) == 2:
        return None
    return FrameHeader(version, 4 - layer_bits, bitrate, rate, padding, (raw[3] >> 6) == 3, raw)


def _info_frames(b: Buffer, pos: int, header: FrameHeader) -> int | None:
    """Frames declared by a Xing/Info or VBRI tag in the frame at `pos` (None: not an info frame)."""
    if header.layer != 3:
        return None
    tag = pos + 4 + header.side_info
    if bytes(b[tag : tag + 4]) in (b"Xing", b"Info"):
        flags = int.from_bytes(b[tag + 4 : tag + 8], "big")
        return int.from_bytes(b[tag + 8 : tag + 12], "big") if flags & 1 else -1
    if bytes(b[pos + 36 : pos + 40]) == b"VBRI":
        return int.from_bytes(b[pos + 50 : pos + 54], "big")
    return None


@dataclass(frozen=True)
class Scan:
    """What the frame walk found."""

    first: FrameHeader | None  # the first frame's header (None: no frames at all)
    audio_start: int  # offset of the first frame (the info frame when there is one)
    frames_start: int  # offset of the first audio frame (after the info frame)
    has_info: bool  # a Xing/Info/VBRI frame leads the stream
    declared: int | None  # frames the info frame declares (None: no count)
    frames: int  # whole audio frames present
    cut: tuple[int, int] | None  # (bytes present, frame length) of a last frame cut off

    @property
    def samples_per_frame(self) -> int:
        return self.first.samples if self.first is not None else 0


def _chains(b: Buffer, pos: int, header: FrameHeader) -> bool:
    """A frame at `pos` is believable when the next one follows it (or the stream ends with it)."""
    end = pos + header.length
    if end >= len(b) or any(bytes(b[end : end + len(t)]) == t for t in _TRAILING_TAGS):
        return True
    following = parse_header(b, end)
    return following is not None and following.same_stream(header)


def _resync(b: Buffer, pos: int, like: FrameHeader | None) -> int | None:
    """The next believable frame start at or after `pos` (within the resync limit), or None."""
    limit = min(len(b), pos + _RESYNC_LIMIT)
    while pos < limit:
        pos = b.find(b"\xff", pos, limit)
        if pos < 0:
            return None
        header = parse_header(b, pos)
        if header is not None and (like is None or header.same_stream(like)) and _chains(b, pos, header):
            return pos
        pos += 1
    return None


def scan(b: Buffer) -> Scan:
    """Walk the frames of an MPEG audio stream (after any leading ID3v2 tags)."""
    start = _resync(b, id3v2_end(b), None)
    if start is None:
        return Scan(None, len(b), len(b), False, None, 0, None)
    first = parse_header(b, start)
    assert first is not None
    declared = _info_frames(b, start, first)
    pos = frames_start = start + first.length if declared is not None else start
    frames, cut = 0, None
    while pos < len(b):
        header = parse_header(b, pos)
        if header is None or not header.same_stream(first):
            if any(bytes(b[pos : pos + len(t)]) == t for t in _TRAILING_TAGS):
                break
            following = _resync(b, pos + 1, first)
            if following is None:
                break
            pos = following
            continue
        if pos + header.length > len(b):
            cut = (len(b) - pos, header.length)
            break
        frames += 1
        pos += header.length
    return Scan(
        first,
        start,
        frames_start,
        declared is not None,
        declared if declared is not None and declared >= 0 else None,
        frames,
        cut,
    )


def stream_extent(found: Scan) -> Extent:
    """The container check for MPEG audio: whole frames against the Xing/VBRI count (in MPEG frames)."""
    if found.first is None:
        return Extent("MPEG frames", None, 0, "the stream")
    if found.cut is not None:
        present, length = found.cut
        raise Truncated(
            f"the last MPEG frame is cut off ({present} of its {length} bytes arrived; "
            f"{found.frames} whole frames before it)"
        )
    if found.declared is not None and found.frames > found.declared:
        raise Inconsistent(
            f"the stream holds {found.frames} MPEG frames but its "
            f"{'Xing' if found.has_info else 'VBRI'} header declares only {found.declared} "
            f"(concatenated files?); the decoder would stop early -- re-encode it"
        )
    where = "the Xing/VBRI header's frame count"
    return Extent("MPEG frames", found.declared, found.frames, where)


def length_header(found: Scan) -> bytes:
    """A Layer III Xing frame declaring `found.frames` frames, shaped like the stream's first frame.

    Put in front of the audio frames of a stream whose header gives no frame count (in place of such
    a header, if there is one), so the decoder knows the exact length.  The decoder skips info frames
    rather than decoding them; it then also trims its own 529-sample decoding delay from the start, as
    it does for every stream with a Xing header but no LAME encoder-delay tag."""
    first = found.first
    assert first is not None and first.layer == 3
    need = 4 + first.side_info + 12
    index = next(
        i
        for i in range(1, 15)
        if FrameHeader(first.version_bits, 3, i, first.rate_index, 0, first.mono, b"").length >= need
    )
    raw = bytes([0xFF, first.raw[1] | 0x01, (index << 4) | (first.rate_index << 2), first.raw[3]])
    frame = FrameHeader(first.version_bits, 3, index, first.rate_index, 0, first.mono, raw)
    body = bytearray(frame.length)
    body[:4] = raw
    tag = 4 + first.side_info
    body[tag : tag + 12] = b"Xing" + (1).to_bytes(4, "big") + found.frames.to_bytes(4, "big")
    return bytes(body)
