"""Symbols that name a specialisation: its family, then one `_`-separated token per parameter.

A specialisation is a frozen dataclass whose fields each declare how they are written (`token(Int("R"))`
gives `R750`); `.symbol` writes the tokens in field order and `from_symbol` reads a symbol back into the
dataclass, so the emitters and the tests share one spelling and nobody matches symbols with a regex of
their own. Optional tokens (a flag, a value equal to its default) are left out of the symbol. Every
symbol parses back to the specialisation that wrote it (`tests/test_specialisations.py`), so two
specialisations never share a symbol (the module builder renders each symbol once).
"""

from __future__ import annotations

import dataclasses
import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar, TypeVar

import numpy as np

S = TypeVar("S", bound="Specialisation")


class SymbolError(ValueError):
    """A symbol that no specialisation writes, or a value a symbol cannot spell exactly."""


class Token(ABC):
    """How one parameter is spelled. `pattern` has exactly one group, absent for a left-out token."""

    optional: bool = False

    @abstractmethod
    def write(self, value: Any) -> str | None:
        """The token's text, or None to leave it out (optional tokens only)."""

    @abstractmethod
    def pattern(self) -> str: ...

    @abstractmethod
    def read(self, text: str | None) -> Any: ...

    def normalized(self, value: Any) -> Any:
        """The value the field holds for `value` (what the symbol can represent)."""
        return value


@dataclasses.dataclass(frozen=True)
class Int(Token):
    """`<prefix><n>` for a non-negative integer."""

    prefix: str

    def write(self, value: int) -> str:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise SymbolError(f"{self.prefix}: {value!r} is not a non-negative integer")
        return f"{self.prefix}{int(value)}"

    def pattern(self) -> str:
        return rf"{re.escape(self.prefix)}(\d+)"

    def read(self, text: str | None) -> int:
        return int(text)


@dataclasses.dataclass(frozen=True)
class OptionalInt(Int):
    """`<prefix><n>`, left out when None."""

    optional: bool = dataclasses.field(default=True, init=False)

    def write(self, value: int | None) -> str | None:
        return None if value is None else super().write(value)

    def read(self, text: str | None) -> int | None:
        return None if text is None else int(text)


@dataclasses.dataclass(frozen=True)
class Dims(Token):
    """`<prefix>8x750x64` for a non-empty shape."""

    prefix: str = ""

    def write(self, value: tuple[int, ...]) -> str:
        if not value or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0 for d in value):
            raise SymbolError(f"{self.prefix or 'dims'}: {value!r} is not a non-empty shape")
        return self.prefix + "x".join(str(int(d)) for d in value)

    def pattern(self) -> str:
        return rf"{re.escape(self.prefix)}(\d+(?:x\d+)*)"

    def read(self, text: str | None) -> tuple[int, ...]:
        return tuple(int(d) for d in text.split("x"))

    def normalized(self, value: Any) -> tuple[int, ...]:
        return tuple(value)


@dataclasses.dataclass(frozen=True)
class Flag(Token):
    """`<text>` when true, left out when false."""

    text: str
    optional: bool = dataclasses.field(default=True, init=False)

    def write(self, value: bool) -> str | None:
        return self.text if value else None

    def pattern(self) -> str:
        return f"({re.escape(self.text)})"

    def read(self, text: str | None) -> bool:
        return text is not None


@dataclasses.dataclass(frozen=True)
class Switch(Token):
    """`<on>` or `<off>` for a boolean that is always spelled."""

    on: str
    off: str

    def write(self, value: bool) -> str:
        return self.on if value else self.off

    def pattern(self) -> str:
        return f"({re.escape(self.on)}|{re.escape(self.off)})"

    def read(self, text: str | None) -> bool:
        return text == self.on


@dataclasses.dataclass(frozen=True)
class Choice(Token):
    """`<prefix><choice>`; the `omitted` value (when given) is left out of the symbol."""

    prefix: str
    choices: tuple[str, ...]
    omitted: str | None = None

    @property
    def optional(self) -> bool:  # type: ignore[override]
        return self.omitted is not None

    def write(self, value: str) -> str | None:
        if value == self.omitted:
            return None
        if value not in self.choices:
            raise SymbolError(f"{self.prefix or 'choice'}: {value!r} is not one of {self.choices}")
        return f"{self.prefix}{value}"

    def pattern(self) -> str:
        spelled = sorted((c for c in self.choices if c != self.omitted), key=len, reverse=True)
        return f"{re.escape(self.prefix)}({'|'.join(map(re.escape, spelled))})"

    def read(self, text: str | None) -> str | None:
        return self.omitted if text is None else text


@dataclasses.dataclass(frozen=True)
class F32Bits(Token):
    """`<prefix><8 hex digits>`: an F32 value by its bit pattern (left out when None). The field holds
    the F32 value (what the templates write), so a symbol names exactly one constant."""

    prefix: str
    optional: bool = dataclasses.field(default=True, init=False)

    def write(self, value: float | None) -> str | None:
        return None if value is None else f"{self.prefix}{int(np.float32(value).view(np.uint32)):08x}"

    def pattern(self) -> str:
        return rf"{re.escape(self.prefix)}([0-9a-f]{{8}})"

    def read(self, text: str | None) -> float | None:
        return None if text is None else float(np.uint32(int(text, 16)).view(np.float32))

    def normalized(self, value: Any) -> float | None:
        return None if value is None else float(np.float32(value))


@dataclasses.dataclass(frozen=True)
class Decimal(Token):
    """`<prefix><value:g>` for a float whose short spelling is exact (left out when None)."""

    prefix: str
    optional: bool = dataclasses.field(default=True, init=False)

    def write(self, value: float | None) -> str | None:
        if value is None:
            return None
        text = f"{value:g}"
        if float(text) != value:
            raise SymbolError(
                f"{self.prefix}: {value!r} has no exact short spelling ({text}); the symbol "
                "would name two specialisations"
            )
        return f"{self.prefix}{text}"

    def pattern(self) -> str:
        return rf"{re.escape(self.prefix)}(-?(?:inf|nan|[0-9.]+(?:e[-+][0-9]+)?))"

    def read(self, text: str | None) -> float | None:
        return None if text is None else float(text)


def token(kind: Token, **field_options: Any) -> Any:
    """A specialisation field spelled by `kind`."""
    return dataclasses.field(metadata={"token": kind}, **field_options)


@dataclasses.dataclass(frozen=True)
class Specialisation:
    """Base of the specialisation dataclasses: `family` is the symbol's head (one class per family)."""

    family: ClassVar[str]
    _families: ClassVar[dict[str, type[Specialisation]]] = {}
    _patterns: ClassVar[dict[type, re.Pattern]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "family" in cls.__dict__:
            if cls.family in Specialisation._families:
                raise TypeError(f"two specialisations of the family {cls.family!r}")
            Specialisation._families[cls.family] = cls

    def __post_init__(self) -> None:
        for f, kind in self._tokens():
            object.__setattr__(self, f.name, kind.normalized(getattr(self, f.name)))
        self.symbol  # noqa: B018 - every value must be spellable: refuse the others at construction

    @classmethod
    def _tokens(cls) -> list[tuple[dataclasses.Field, Token]]:
        return [(f, f.metadata["token"]) for f in dataclasses.fields(cls) if "token" in f.metadata]

    @property
    def symbol(self) -> str:
        texts = (kind.write(getattr(self, f.name)) for f, kind in self._tokens())
        return "_".join([self.family, *(t for t in texts if t is not None)])

    @classmethod
    def _pattern(cls) -> re.Pattern:
        if cls not in Specialisation._patterns:
            body = re.escape(cls.family)
            for _, kind in cls._tokens():
                body += f"(?:_{kind.pattern()})?" if kind.optional else f"_{kind.pattern()}"
            Specialisation._patterns[cls] = re.compile(body)
        return Specialisation._patterns[cls]

    @classmethod
    def from_symbol(cls: type[S], symbol: str) -> S:
        """The specialisation `symbol` names (SymbolError if this family does not write it)."""
        match = cls._pattern().fullmatch(symbol)
        if match is None:
            raise SymbolError(f"{symbol!r} is not a {cls.__name__} symbol ({cls.family}_...)")
        values = {f.name: kind.read(match.group(i)) for i, (f, kind) in enumerate(cls._tokens(), 1)}
        spec = cls(**values)
        if spec.symbol != symbol:
            raise SymbolError(f"{symbol!r} is not how {cls.__name__} spells {spec} ({spec.symbol})")
        return spec


def parse_symbol(symbol: str) -> Specialisation:
    """The specialisation of whichever family writes `symbol`."""
    found = []
    for family, cls in Specialisation._families.items():
        if symbol.startswith(family + "_"):
            try:
                found.append(cls.from_symbol(symbol))
            except SymbolError:
                continue
    if len(found) != 1:
        raise SymbolError(f"{symbol!r} is written by {len(found)} specialisation families, not one")
    return found[0]
