"""The one small interface every answering backend implements."""

from __future__ import annotations

import time
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
class Deadline:
    """The time one whole answer may take, counted from `started` (`time.monotonic()`)."""

    seconds: float
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def left(self) -> float:
        """Seconds still allowed; zero or less once the deadline has passed."""
        return self.seconds - self.elapsed()

    def expired(self) -> bool:
        return self.left() <= 0

    def missed(self) -> str:
        """How long it took against the deadline, e.g. "within 12.3 s (deadline 12 s)"."""
        return f"within {self.elapsed():.1f} s (deadline {self.seconds:g} s)"


@dataclass(frozen=True)
class GenerationRequest:
    """What a backend is asked: chat messages for LLMs, and the (standalone) question and
    sources for backends that work on the passages directly.

    `deadline` bounds the generation, retries included; share one `Deadline` between the
    requests of one answer (follow-up rewriting, then the answer). None: the backend's
    `llm.deadline`, counted from the start of `generate`."""

    question: str
    sources: list[Source]
    messages: list[dict[str, str]] = field(default_factory=list)
    max_tokens: int = 200
    temperature: float = 0.0
    deadline: Deadline | None = None


@runtime_checkable
class Backend(Protocol):
    """Turns a request into answer text, streamed in pieces.

    Implementations raise `assistant.errors.BackendError` with one clear sentence when
    they cannot answer (unreachable, refused, timed out, past the deadline, garbage)."""

    name: str
    # Tokens of each source the prompt may carry (None: the whole abstract). A CPU model's
    # prompt processing is most of its answering time.
    source_tokens: int | None
    # A weak model's verified answer is kept only when it addresses the question about as
    # well as the extractive answer does.
    weak: bool

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the answer text in pieces as it is produced."""
        ...

    def status(self) -> str:
        """A short human-readable state, e.g. 'model loaded' or 'API unreachable'."""
        ...
