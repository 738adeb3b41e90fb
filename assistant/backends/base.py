"""The one small interface every answering backend implements."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Source:
    """One numbered passage offered to the backend (numbering starts at 1)."""

    n: int
    paper_id: str
    title: str
    venue: str | None
    text: str
    authors: tuple[str, ...] = ()

    @property
    def context(self) -> str:
        """Title, authors and venue: what identifies the paper, outside the passage."""
        return " ".join((self.title, *self.authors, self.venue or ""))


@dataclass(frozen=True)
class GenerationRequest:
    """What a backend is asked: chat messages for LLMs, and the (standalone) question and
    sources for backends that work on the passages directly."""

    question: str
    sources: list[Source]
    messages: list[dict[str, str]] = field(default_factory=list)
    max_tokens: int = 200
    temperature: float = 0.0


@runtime_checkable
class Backend(Protocol):
    """Turns a request into answer text, streamed in pieces.

    Implementations raise `assistant.errors.BackendError` with one clear sentence when
    they cannot answer (unreachable, refused, timed out, garbage)."""

    name: str
    # Tokens of each source the prompt may carry (None: the whole abstract). A CPU model's
    # prompt processing is most of its answering time.
    source_tokens: int | None

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the answer text in pieces as it is produced."""
        ...

    def status(self) -> str:
        """A short human-readable state, e.g. 'model loaded' or 'API unreachable'."""
        ...
