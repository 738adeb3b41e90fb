"""What every reader returns, and the helpers the readers share (text, JSON, fields).

Readers know file formats, nothing about papers or the index: they turn one file into
`Record`s, one per entry (its abstract empty when the entry has none), and raise
`CorpusError` with the file's name and line for anything they cannot read. Skipping
entries without an abstract, whitespace, ids, limits and merging are `assistant.corpus`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CorpusError

_WHITESPACE = re.compile(r"\s+")
_NOTES_ARRAY = re.compile(r'"notes"\s*:\s*\[')
_YEAR = re.compile(r"\b(1[89]\d\d|2\d\d\d)\b")


@dataclass
class Record:
    """One entry of an input file, as its format gives it (text decoded, nothing else)."""

    line: int
    abstract: str
    title: str | None = None
    authors: list[str] = field(default_factory=list)
    venue: str | None = None
    url: str | None = None
    area: str | None = None
    year: int | None = None
    doi: str | None = None
    links: list[str] = field(default_factory=list)


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace into one space and strip the ends."""
    return _WHITESPACE.sub(" ", text).strip()


def read_text(path: Path) -> str:
    """The file's UTF-8 text (a BOM dropped), or `CorpusError` if unreadable or empty."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorpusError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CorpusError(path, "is not UTF-8 text", line=line) from None
    if not text.strip():
        raise CorpusError(path, "is empty")
    return text.lstrip("\ufeff")


def _loads(path: Path, text: str, line: int | None = None) -> object:
    """`json.loads(text)`, or `CorpusError`; `line` is where a one-line `text` is (JSON lines)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorpusError(path, f"is not valid JSON ({exc.msg})", line=line or exc.lineno) from None
    except (RecursionError, ValueError):  # nested too deeply; a number too long
        raise CorpusError(path, "is JSON too deeply nested or too large", line=line) from None


def json_lines(path: Path, text: str | None = None) -> Iterator[tuple[int, dict]]:
    """(line, object) for every non-blank line of a JSON-lines file."""
    text = read_text(path) if text is None else text
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row = _loads(path, line, number)
        if not isinstance(row, dict):
            raise CorpusError(path, "must be a JSON object", line=number)
        yield number, row


def _is_json_lines(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return isinstance(json.loads(first), dict)
    except (RecursionError, ValueError):  # not JSON, or JSON too deep or large for one line
        return False


def _array_items(text: str, start: int) -> Iterator[tuple[int, object]]:
    """(line, item) of the JSON array opening at `text[start]` (already validated)."""
    decoder = json.JSONDecoder()
    position, line, counted = start + 1, 1, 0
    while True:
        while text[position] in " \t\r\n,":
            position += 1
        if text[position] == "]":
            return
        line += text.count("\n", counted, position)
        counted = position
        item, position = decoder.raw_decode(text, position)
        yield line, item


def json_records(path: Path) -> Iterator[tuple[int, dict]]:
    """(line, object) of every record of a JSON export: JSON lines, an array of objects, or
    an object holding them under "notes" (OpenReview's API); a lone object is one record."""
    text = read_text(path)
    if _is_json_lines(text):
        yield from json_lines(path, text)
        return
    document = _loads(path, text)
    if isinstance(document, dict) and isinstance(document.get("notes"), list):
        items = _array_items(text, _NOTES_ARRAY.search(text).end() - 1)
    elif isinstance(document, list):
        items = _array_items(text, text.index("["))
    else:
        items = iter([(1, document)])
    for line, item in items:
        if not isinstance(item, dict):
            raise CorpusError(path, "must hold JSON objects, one per paper", line=line)
        yield line, item


def peek_json(path: Path) -> object | None:
    """The first record of a JSON or JSON-lines file, to tell formats apart (None if the
    file is not valid JSON: the reader chosen then reports where)."""
    try:
        first = next(json_records(path), None)
    except CorpusError:
        return None
    return first[1] if first else None


def text_field(path: Path, line: int, row: dict, name: str) -> str | None:
    """`row[name]` as text (None when missing or empty); `CorpusError` if not a string."""
    value = row.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise CorpusError(path, f"field {name!r} must be a string", line=line)
    return value


def name_list(path: Path, line: int, value: object, name: str = "authors") -> list[str]:
    """A list of names given as a list of strings or one comma-separated string."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item for item in value if item.strip()]
    raise CorpusError(path, f"field {name!r} must be a list of strings", line=line)


def first_name_first(name: str) -> str:
    """ "Last, First" (or "von Last, Jr, First") as "First von Last Jr", the way BibTeX
    splits names; a name without a comma is returned as it is."""
    if "," not in name:
        return name.strip()
    from bibtexparser.middlewares.names import parse_single_name_into_parts

    return parse_single_name_into_parts(name, strict=False).merge_first_name_first


def year_in(value: object) -> int | None:
    """The first plausible year in `value` (2024, "2024", "2024-05-01", "May 2024")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1800 <= value <= 2999 else None
    match = _YEAR.search(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else None
