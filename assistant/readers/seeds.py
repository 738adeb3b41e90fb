"""citeqa's seed files (`.txt`): a header line, then abstracts, each optionally preceded
by a topic line and an author line (the layout of `002_…`); titles, venues and links come
from `seed_metadata.jsonl` beside them, joined by file name and order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import CorpusError
from .base import Record, json_lines, normalize_whitespace, read_text

NAME = "seeds"
EXTENSIONS = (".txt",)
METADATA_NAME = "seed_metadata.jsonl"


@dataclass(frozen=True)
class _Paragraph:
    text: str
    line: int


def _paragraphs(text: str) -> list[_Paragraph]:
    paragraphs: list[_Paragraph] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line)
        elif current:
            paragraphs.append(_Paragraph(normalize_whitespace(" ".join(current)), start))
            current = []
    if current:
        paragraphs.append(_Paragraph(normalize_whitespace(" ".join(current)), start))
    return paragraphs


def _is_prose(text: str) -> bool:
    """Abstracts are prose; author and topic lines are lists of capitalised names."""
    words = [word for word in text.split() if word[:1].isalpha()]
    if len(words) < 12:
        return False
    lowercase = sum(word[0].islower() for word in words)
    return lowercase / len(words) > 0.45


def _split_names(line: str) -> list[str]:
    return [name.strip() for name in line.split(",") if name.strip()]


def _metadata(folder: Path) -> dict[tuple[str, int], dict]:
    path = folder / METADATA_NAME
    if not path.is_file():
        return {}
    rows = {}
    for number, row in json_lines(path):
        try:
            rows[(row["seed_file"], int(row["index_in_file"]))] = row
        except (KeyError, TypeError, ValueError):
            raise CorpusError(path, "needs seed_file and index_in_file", line=number) from None
    return rows


def _check_join(path: Path, paragraph: _Paragraph, row: dict) -> None:
    start = normalize_whitespace(row.get("abstract_start") or "")
    if start and not paragraph.text.startswith(start):
        raise CorpusError(
            path, f"abstract does not match {METADATA_NAME} ({start[:40]!r}…)", paragraph.line
        )


def read(path: Path) -> list[Record]:
    paragraphs = _paragraphs(read_text(path))[1:]
    metadata = _metadata(path.parent)
    records: list[Record] = []
    pending: list[_Paragraph] = []
    for paragraph in paragraphs:
        if not _is_prose(paragraph.text):
            pending.append(paragraph)
            continue
        if len(pending) > 2:
            raise CorpusError(path, "expected at most a topic and an author line", pending[0].line)
        inline_area = pending[0].text if len(pending) == 2 else None
        inline_authors = _split_names(pending[-1].text) if pending else []
        row = metadata.get((path.name, len(records)), {})
        _check_join(path, paragraph, row)
        records.append(
            Record(
                line=paragraph.line,
                title=row.get("title"),
                authors=row.get("authors") or inline_authors,
                venue=row.get("venue"),
                url=row.get("url"),
                area=row.get("area") or inline_area,
                abstract=paragraph.text,
            )
        )
        pending = []
    if pending:
        raise CorpusError(
            path, "ends with a line that is not followed by an abstract", pending[0].line
        )
    if not records:
        raise CorpusError(path, "contains no abstracts")
    return records
