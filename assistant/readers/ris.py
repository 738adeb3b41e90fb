"""RIS (`.ris`), as Zotero, Mendeley, EndNote and publishers export it, read with rispy:
`TI`/`T1` title, `AU`/`A1` authors, `AB`/`N2` abstract, `T2`/`JO` venue, `PY`/`DA` year,
`DO`, `UR`."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import CorpusError
from .base import Record, first_name_first, read_text, year_in

NAME = "ris"
EXTENSIONS = (".ris",)
_TAG_LINE = re.compile(r"^([A-Z][A-Z0-9])  -( |$)")


def _check_syntax(path: Path, text: str) -> list[int]:
    """Line of each reference; `CorpusError` at a tag outside a reference or a reference
    left open (rispy would silently drop or merge them). Untagged lines continue a field
    inside a reference and are ignored between references (numbering such as "1.")."""
    starts, inside = [], False
    for number, line in enumerate(text.split("\n"), start=1):
        match = _TAG_LINE.match(line)
        if match is None:
            continue
        tag = match.group(1)
        if tag == "TY":
            if inside:
                raise CorpusError(path, "is not valid RIS (a reference without ER)", starts[-1])
            starts.append(number)
            inside = True
        elif tag == "ER":
            inside = False
        elif not inside:
            raise CorpusError(path, f"is not valid RIS (tag {tag} outside a reference)", number)
    if inside:
        raise CorpusError(path, "is not valid RIS (the last reference has no ER)", starts[-1])
    return starts


def _first(entry: dict, *keys: str) -> str | None:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, list):
            value = next((item for item in value if item), None)
        if value:
            return value
    return None


def read(path: Path) -> list[Record]:
    import rispy

    text = read_text(path)
    lines = _check_syntax(path, text)
    entries = rispy.loads(text, skip_unknown_tags=True)
    records = []
    for line, entry in zip(lines, entries, strict=True):
        urls = [url for url in entry.get("urls", []) if url]
        authors = entry.get("authors") or entry.get("first_authors") or []
        records.append(
            Record(
                line=line,
                title=_first(entry, "title", "primary_title"),
                authors=[first_name_first(name) for name in authors if name.strip()],
                venue=_first(entry, "secondary_title", "journal_name", "alternate_title3"),
                year=year_in(_first(entry, "year", "publication_year", "date")),
                doi=_first(entry, "doi"),
                url=urls[0] if urls else None,
                links=urls[1:],
                abstract=_first(entry, "abstract", "notes_abstract") or "",
            )
        )
    return records
