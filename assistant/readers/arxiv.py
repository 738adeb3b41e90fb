"""arXiv metadata as JSON lines (the public snapshot, `arxiv-metadata-oai-snapshot.json`,
or a slice of it): `id`, `title`, `authors` or `authors_parsed`, `abstract`, `categories`,
`journal-ref`, `doi`, `versions`, `update_date`. The arXiv page is the link, the
categories the area; titles and abstracts are LaTeX source."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import CorpusError
from .base import Record, json_records, text_field, year_in
from .latex import latex_to_text

NAME = "arxiv"
EXTENSIONS = (".jsonl", ".json")
_AUTHOR_SEPARATOR = re.compile(r",\s*|\s+and\s+")


def claims(first: object) -> bool:
    return isinstance(first, dict) and (
        "authors_parsed" in first or {"id", "categories", "abstract"} <= first.keys()
    )


def _authors(path: Path, line: int, row: dict) -> list[str]:
    parsed = row.get("authors_parsed")
    if isinstance(parsed, list) and all(isinstance(name, list) for name in parsed):
        # [last, first, suffix]
        return [
            " ".join(str(part) for part in (*name[1:2], *name[:1], *name[2:]) if part)
            for name in parsed
        ]
    value = text_field(path, line, row, "authors") or ""
    return [latex_to_text(name) for name in _AUTHOR_SEPARATOR.split(value) if name.strip()]


def _year(row: dict) -> int | None:
    versions = row.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        return year_in(versions[0].get("created"))
    return year_in(row.get("update_date"))


def _decoded(path: Path, line: int, row: dict, name: str) -> str | None:
    value = text_field(path, line, row, name)
    return latex_to_text(value) if value else None


def read(path: Path) -> list[Record]:
    records = []
    for line, row in json_records(path):
        arxiv_id = text_field(path, line, row, "id")
        if arxiv_id is None:
            raise CorpusError(path, "needs the arXiv 'id' of every paper", line=line)
        records.append(
            Record(
                line=line,
                title=_decoded(path, line, row, "title"),
                authors=_authors(path, line, row),
                venue=_decoded(path, line, row, "journal-ref") or "arXiv",
                area=text_field(path, line, row, "categories"),
                year=_year(row),
                doi=text_field(path, line, row, "doi"),
                url=f"https://arxiv.org/abs/{arxiv_id.strip()}",
                abstract=_decoded(path, line, row, "abstract") or "",
            )
        )
    return records
