"""Answering backends. Adding one is one file with a class implementing `Backend`,
plus a line in `make_backend`."""

from __future__ import annotations

import reprlib

from ..errors import SettingsError
from ..relevance import RelevanceScorer
from ..settings import Settings
from .base import Backend, Deadline, GenerationRequest, Source

BACKEND_NAMES = ("auto", "local", "openai", "extractive")


def resolve_name(name: str | None, settings: Settings) -> str:
    """The concrete backend for `name`: `auto` is `openai` when an API is configured in
    citeqa's own settings, else `local`. It never falls back to a paid API on its own."""
    if name is not None and not isinstance(name, str):
        raise SettingsError(
            f"the backend must be one of {', '.join(BACKEND_NAMES)} (as text); "
            f"got {reprlib.repr(name)}"
        )
    name = (name or settings.llm.backend).strip().lower()
    if name not in BACKEND_NAMES:
        raise SettingsError(
            f"setting 'llm.backend': unknown backend {name!r}; choose one of "
            + ", ".join(BACKEND_NAMES)
        )
    if name == "auto":
        return "openai" if settings.llm.api_configured else "local"
    return name


def make_backend(name: str, settings: Settings, relevance: RelevanceScorer) -> Backend:
    """A backend instance for a concrete name (see `resolve_name`)."""
    if name == "extractive":
        from .extractive import ExtractiveBackend

        return ExtractiveBackend(relevance, settings.answer)
    if name == "local":
        from .local import LocalBackend

        return LocalBackend(settings.llm)
    from .openai_compat import OpenAIBackend

    return OpenAIBackend(settings.llm)


__all__ = [
    "BACKEND_NAMES",
    "Backend",
    "Deadline",
    "GenerationRequest",
    "Source",
    "make_backend",
    "resolve_name",
]
