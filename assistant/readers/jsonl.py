"""citeqa's own JSON lines (`.jsonl`), the fields of `abstracts_2024.jsonl`: `title`,
`authors`, `abstract`, `venue`, `url`, and optionally `area`, `year` and `doi`."""

from __future__ import annotations

from pathlib import Path

from .base import Record, json_lines, name_list, text_field, year_in

NAME = "jsonl"
EXTENSIONS = (".jsonl",)


def claims(first: object) -> bool:
    """The fallback for `.jsonl`: any record that no other JSON-lines format claims."""
    return True


def read(path: Path) -> list[Record]:
    return [
        Record(
            line=line,
            title=text_field(path, line, row, "title"),
            authors=name_list(path, line, row.get("authors")),
            venue=text_field(path, line, row, "venue"),
            url=text_field(path, line, row, "url"),
            area=text_field(path, line, row, "area"),
            year=year_in(row.get("year")),
            doi=text_field(path, line, row, "doi"),
            abstract=text_field(path, line, row, "abstract") or "",
        )
        for line, row in json_lines(path)
    ]
