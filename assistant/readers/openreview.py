"""OpenReview notes as its API returns them (a JSON array, JSON lines, or the API's
`{"notes": [...]}` answer): `content.title`, `content.authors`, `content.abstract`,
`content.venue`, `forum`, in the old shape (plain values) and the new one (API 2,
`{"value": ...}`). The forum page is the link, `primary_area` the area."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from ..errors import CorpusError
from .base import Record, json_records, name_list, text_field, year_in

NAME = "openreview"
EXTENSIONS = (".json", ".jsonl")
_DATES = ("pdate", "odate", "cdate", "tcdate")  # milliseconds since 1970


def claims(first: object) -> bool:
    return isinstance(first, dict) and isinstance(first.get("content"), dict)


def _plain(content: dict) -> dict:
    """The content with API 2's `{"value": x}` wrappers taken off."""
    return {
        key: value["value"] if isinstance(value, dict) and "value" in value else value
        for key, value in content.items()
    }


def _year(note: dict, venue: str | None) -> int | None:
    for key in _DATES:
        stamp = note.get(key)
        if isinstance(stamp, int | float) and not isinstance(stamp, bool) and stamp > 0:
            try:
                return datetime.fromtimestamp(stamp / 1000, tz=timezone.utc).year
            except (OverflowError, OSError, ValueError):  # not a date a computer can hold
                continue
    return year_in(venue)


def read(path: Path) -> list[Record]:
    records = []
    for line, note in json_records(path):
        if not isinstance(note.get("content"), dict):
            raise CorpusError(path, "is not an OpenReview note (no 'content')", line=line)
        content = _plain(note["content"])
        forum = note.get("forum") or note.get("id")
        venue = text_field(path, line, content, "venue")
        records.append(
            Record(
                line=line,
                title=text_field(path, line, content, "title"),
                authors=name_list(path, line, content.get("authors")),
                venue=venue,
                area=text_field(path, line, content, "primary_area"),
                year=_year(note, venue),
                url=f"https://openreview.net/forum?id={forum}" if forum else None,
                abstract=text_field(path, line, content, "abstract") or "",
            )
        )
    return records
