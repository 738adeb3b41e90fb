"""CSL-JSON (`.json`), Zotero's "CSL JSON" and Better BibTeX's "Better CSL JSON" exports:
an array of items with `title`, `author` ({family, given} or {literal}), `abstract`,
`container-title`, `issued`, `DOI` and `URL`."""

from __future__ import annotations

from pathlib import Path

from ..errors import CorpusError
from .base import Record, json_records, text_field, year_in

NAME = "csl-json"
EXTENSIONS = (".json",)
_NAME_PARTS = ("given", "dropping-particle", "non-dropping-particle", "family", "suffix")
_VENUE_FIELDS = ("container-title", "event-title", "collection-title")


def claims(first: object) -> bool:
    """The fallback for `.json`: any record that no other JSON format claims."""
    return True


def _authors(path: Path, line: int, value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(person, dict) for person in value):
        raise CorpusError(path, "field 'author' must be a list of name objects", line=line)
    names = []
    for person in value:
        parts = [person.get(part) for part in _NAME_PARTS]
        name = person.get("literal") or " ".join(str(part) for part in parts if part)
        if name:
            names.append(str(name))
    return names


def _year(issued: object) -> int | None:
    if not isinstance(issued, dict):
        return year_in(issued)
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        return year_in(parts[0][0])
    return year_in(issued.get("raw") or issued.get("literal"))


def read(path: Path) -> list[Record]:
    records = []
    for line, item in json_records(path):
        venue = next(
            (text_field(path, line, item, name) for name in _VENUE_FIELDS if item.get(name)),
            None,
        )
        records.append(
            Record(
                line=line,
                title=text_field(path, line, item, "title"),
                authors=_authors(path, line, item.get("author")),
                venue=venue,
                year=_year(item.get("issued")),
                doi=text_field(path, line, item, "DOI"),
                url=text_field(path, line, item, "URL"),
                abstract=text_field(path, line, item, "abstract") or "",
            )
        )
    return records
