"""What an audio container declares about its length, and the bytes it is read from: the vocabulary shared by the
container table (`runtime/audio/containers.py`) and the MPEG frame walk (`runtime/audio/mpeg.py`)."""

from __future__ import annotations

import mmap
from dataclasses import dataclass

Buffer = bytes | bytearray | mmap.mmap


class Truncated(Exception):
    """The container's structure ends early (a header or chunk cut off): the reason, in words."""


class Inconsistent(Exception):
    """The data contradicts the container's own header in a way the decoder would not survive."""


@dataclass(frozen=True)
class Extent:
    """How much sample data a container declares and how much of it the input holds.

    ``unit`` names what is counted ("bytes", "frames", "MPEG frames"); ``declared`` is None when the
    container does not record its length; ``present`` is None when only decoding can tell (FLAC);
    ``where`` names the header field, for messages.
    """

    unit: str
    declared: int | None
    present: int | None
    where: str

    @property
    def missing(self) -> int:
        """How much is missing, as far as the header and the bytes present tell (0 when unknown)."""
        if self.declared is None or self.present is None:
            return 0
        return max(0, self.declared - self.present)


def id3v2_end(b: Buffer) -> int:
    """Offset just past any ID3v2 tags at the start (MP3 and FLAC files may begin with one)."""
    pos = 0
    while bytes(b[pos : pos + 3]) == b"ID3" and len(b) >= pos + 10:
        size = (b[pos + 6] << 21) | (b[pos + 7] << 14) | (b[pos + 8] << 7) | b[pos + 9]
        pos += 10 + size + (10 if b[pos + 5] & 0x10 else 0)
    return pos
