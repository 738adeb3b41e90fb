"""Input formats: one module per format, each with `NAME`, `EXTENSIONS` and
`read(path) -> list[Record]` (and `claims(first_record)` when it shares an extension with
another JSON format). Adding a format is one module plus its line in `FORMATS`."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from ..errors import CorpusError
from . import arxiv, bibtex, csl, jsonl, openreview, ris, seeds
from .base import Record, normalize_whitespace, peek_json

__all__ = ["FORMATS", "FORMAT_NAMES", "Record", "corpus_files", "normalize_whitespace", "reader"]

# for a shared extension the first format whose `claims` accepts the file's first record wins
FORMATS: tuple[ModuleType, ...] = (bibtex, ris, arxiv, openreview, csl, jsonl, seeds)
FORMAT_NAMES = tuple(module.NAME for module in FORMATS)
_EXTENSIONS = {extension for module in FORMATS for extension in module.EXTENSIONS}


def reader(path: Path, format_name: str | None = None) -> ModuleType:
    """The format module for `path`: `format_name` if given, else by extension (and, for
    `.json`/`.jsonl`, by the fields of the first record)."""
    if format_name is not None:
        by_name = {module.NAME: module for module in FORMATS}
        if format_name in by_name:
            return by_name[format_name]
        raise CorpusError(
            path, f"unknown format {format_name!r}; choose one of {', '.join(FORMAT_NAMES)}"
        )
    suffix = path.suffix.lower()
    candidates = [module for module in FORMATS if suffix in module.EXTENSIONS]
    if not candidates:
        raise CorpusError(
            path,
            f"has an extension citeqa does not read; use one of {', '.join(sorted(_EXTENSIONS))} "
            f"or name the format with --format ({', '.join(FORMAT_NAMES)})",
        )
    if len(candidates) == 1:
        return candidates[0]
    first = peek_json(path)
    return next(module for module in candidates if module.claims(first))


def corpus_files(folder: Path) -> list[Path]:
    """The files in `folder` that a format reads (not the seeds' metadata), sorted."""
    found = (item for item in folder.iterdir() if item.is_file())
    return sorted(
        item
        for item in found
        if item.suffix.lower() in _EXTENSIONS and item.name != seeds.METADATA_NAME
    )
