"""Errors citeqa raises: each carries one sentence a user can act on."""

from __future__ import annotations


class CiteqaError(Exception):
    """Base class: the message is meant to be shown to the user as it is."""


class SettingsError(CiteqaError):
    """A setting is missing, malformed or names something that does not exist."""


class CorpusError(CiteqaError):
    """An input file cannot be parsed; names the file and, where known, the line."""

    def __init__(self, path: object, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class IndexMismatchError(CiteqaError):
    """The index was built with other embedding or chunk settings than the current ones."""


class IndexUnavailableError(CiteqaError):
    """The index or its data directory cannot be used (not a folder, read-only, damaged, or
    its Chroma server unreachable)."""


class QuestionError(CiteqaError):
    """The question cannot be answered as asked (empty, too long, no text)."""


class BackendError(CiteqaError):
    """The language-model backend failed (unreachable, refused, timed out, returned garbage)."""
