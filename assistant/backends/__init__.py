"""Generation backends: language models that write an answer from numbered sources. Adding
one is one file with a class implementing `Backend`, plus a line in `make_backend`.

`extractive` is not a backend but the absence of one: the answer is composed from the
papers' own sentences (`assistant.answering.plans`)."""

from __future__ import annotations

import reprlib

from ..errors import SettingsError
from ..settings import Settings
from .base import Backend, Deadline, GenerationRequest, Source

BACKEND_NAMES = ("auto", "local", "openai", "extractive")
EXTRACTIVE = "extractive"


def resolve_name(name: str | None, settings: Settings) -> str:
    """The concrete backend for `name`: `auto` is `openai` when an API is configured in
    citeqa's own settings, `local` when a GGUF model is, and otherwise `extractive` (the
    bundled 135M model does not beat the extractive answers; see README). It never falls
    back to a paid API on its own."""
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
        if settings.llm.api_configured:
            return "openai"
        return "local" if settings.llm.model_path else EXTRACTIVE
    return name


def make_backend(name: str, settings: Settings) -> Backend:
    """The generation backend for a concrete name other than `extractive`."""
    if name == "local":
        from .local import LocalBackend

        return LocalBackend(settings.llm)
    if name == "openai":
        from .openai_compat import OpenAIBackend

        return OpenAIBackend(settings.llm)
    raise SettingsError(f"'{name}' is not a generation backend")


__all__ = [
    "BACKEND_NAMES",
    "EXTRACTIVE",
    "Backend",
    "Deadline",
    "GenerationRequest",
    "Source",
    "make_backend",
    "resolve_name",
]
