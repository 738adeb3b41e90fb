"""Read abstracts: the shipped seed files (with their metadata) and JSONL corpora.

Everything is parsed and validated before anything touches the index, so a broken
file is rejected whole, with its name and line, and nothing is half-written.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from .errors import CorpusError

SEED_METADATA_NAME = "seed_metadata.jsonl"
MAX_ABSTRACT_CHARS = 20_000
_WHITESPACE = re.compile(r"\s+")


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace into one space and strip the ends."""
    return _WHITESPACE.sub(" ", text).strip()


def short_authors(authors: list[str], most: int = 3) -> str:
    """'A, B, C et al.' for long author lists."""
    return ", ".join(authors[:most]) + (" et al." if len(authors) > most else "")


def make_paper_id(title: str | None, abstract: str) -> str:
    """A stable id: the same paper gets the same id on every machine and run."""
    key = (
        f"title:{normalize_whitespace(title).casefold()}" if title else f"abstract:{abstract[:200]}"
    )
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


class Paper(BaseModel):
    """One paper: its abstract and what is known about it."""

    paper_id: str
    title: str | None = None
    authors: list[str] = Field(default_factory=list)
    venue: str | None = None
    url: str | None = None
    area: str | None = None
    abstract: str
    source: str = ""

    @property
    def display_title(self) -> str:
        """The title, or for an untitled paper its authors and first words."""
        if self.title:
            return self.title
        lead = " ".join(self.abstract.split()[:8])
        who = short_authors(self.authors)
        return f"{who}: {lead}…" if who else f"{lead}…"

    @property
    def content_hash(self) -> str:
        """Changes whenever anything that is indexed about the paper changes."""
        payload = self.model_dump_json(exclude={"source"})
        return hashlib.sha1(payload.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class _Paragraph:
    text: str
    line: int


def _read_text(path: Path) -> str:
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


def _seed_metadata(folder: Path) -> dict[tuple[str, int], dict]:
    path = folder / SEED_METADATA_NAME
    if not path.is_file():
        return {}
    rows = {}
    for number, row in _json_lines(path):
        try:
            rows[(row["seed_file"], int(row["index_in_file"]))] = row
        except (KeyError, TypeError, ValueError):
            raise CorpusError(path, "needs seed_file and index_in_file", line=number) from None
    return rows


def parse_seed_file(path: Path, metadata: dict[tuple[str, int], dict] | None = None) -> list[Paper]:
    """Parse one seed file: a header line, then abstracts, each optionally preceded by a
    topic line and an author line (the layout of `002_…`)."""
    paragraphs = _paragraphs(_read_text(path))[1:]
    metadata = metadata or {}
    papers: list[Paper] = []
    pending: list[_Paragraph] = []
    for paragraph in paragraphs:
        if not _is_prose(paragraph.text):
            pending.append(paragraph)
            continue
        if len(pending) > 2:
            raise CorpusError(path, "expected at most a topic and an author line", pending[0].line)
        inline_area = pending[0].text if len(pending) == 2 else None
        inline_authors = _split_names(pending[-1].text) if pending else []
        row = metadata.get((path.name, len(papers)), {})
        _check_join(path, paragraph, row)
        papers.append(
            _make_paper(
                path,
                paragraph.line,
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
    if not papers:
        raise CorpusError(path, "contains no abstracts")
    return papers


def _check_join(path: Path, paragraph: _Paragraph, row: dict) -> None:
    start = normalize_whitespace(row.get("abstract_start") or "")
    if start and not paragraph.text.startswith(start):
        raise CorpusError(
            path, f"abstract does not match {SEED_METADATA_NAME} ({start[:40]!r}…)", paragraph.line
        )


def _json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    text = _read_text(path)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(path, f"is not valid JSON ({exc.msg})", line=number) from None
        except (RecursionError, ValueError):  # nested too deeply; a number too long
            raise CorpusError(path, "is JSON too deeply nested or too large", line=number) from None
        if not isinstance(row, dict):
            raise CorpusError(path, "must be a JSON object", line=number)
        yield number, row


def _optional_str(path: Path, line: int, row: dict, name: str) -> str | None:
    value = row.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise CorpusError(path, f"field {name!r} must be a string", line=line)
    return normalize_whitespace(value)


def _authors(path: Path, line: int, value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return _split_names(value)
    if isinstance(value, list) and all(isinstance(name, str) for name in value):
        return [normalize_whitespace(name) for name in value if name.strip()]
    raise CorpusError(path, "field 'authors' must be a list of strings", line=line)


def parse_jsonl(path: Path) -> list[Paper]:
    """Parse a JSONL corpus with the fields of `abstracts_2024.jsonl`:
    title, authors, abstract, venue, url (and optionally area)."""
    papers = []
    for number, row in _json_lines(path):
        abstract = row.get("abstract")
        if not isinstance(abstract, str) or not abstract.strip():
            raise CorpusError(path, "needs a non-empty string field 'abstract'", line=number)
        papers.append(
            _make_paper(
                path,
                number,
                title=_optional_str(path, number, row, "title"),
                authors=_authors(path, number, row.get("authors")),
                venue=_optional_str(path, number, row, "venue"),
                url=_optional_str(path, number, row, "url"),
                area=_optional_str(path, number, row, "area"),
                abstract=abstract,
            )
        )
    if not papers:
        raise CorpusError(path, "contains no papers")
    return papers


def _make_paper(path: Path, line: int, *, abstract: str, title: str | None, **fields) -> Paper:
    abstract = normalize_whitespace(abstract)
    if len(abstract) > MAX_ABSTRACT_CHARS:
        raise CorpusError(
            path,
            f"abstract has {len(abstract):,} characters; the limit is {MAX_ABSTRACT_CHARS:,}",
            line=line,
        )
    title = normalize_whitespace(title) if title else None
    return Paper(
        paper_id=make_paper_id(title, abstract),
        title=title,
        abstract=abstract,
        source=f"{path.name}:{line}",
        **fields,
    )


def _expand(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        path = Path(path).expanduser()
        if path.is_dir():
            found = sorted(
                item
                for item in path.iterdir()
                if item.suffix in {".txt", ".jsonl"} and item.name != SEED_METADATA_NAME
            )
            if not found:
                raise CorpusError(path, "holds no .txt or .jsonl corpus files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CorpusError(path, "does not exist")
    return files


def load_corpus(paths: Iterable[Path]) -> list[Paper]:
    """Parse every file (folders: their `.txt` seed files and `.jsonl` corpora) into papers.

    Raises `CorpusError` naming the file and line of the first problem, including a paper
    that appears twice in one file. A paper already read from an earlier file is skipped."""
    papers: dict[str, Paper] = {}
    metadata_by_folder: dict[Path, dict] = {}
    for path in _expand(paths):
        if path.suffix == ".jsonl":
            parsed = parse_jsonl(path)
        else:
            folder = path.parent
            if folder not in metadata_by_folder:
                metadata_by_folder[folder] = _seed_metadata(folder)
            parsed = parse_seed_file(path, metadata_by_folder[folder])
        _reject_duplicates(path, parsed)
        for paper in parsed:
            papers.setdefault(paper.paper_id, paper)
    return list(papers.values())


def _reject_duplicates(path: Path, papers: list[Paper]) -> None:
    first_seen: dict[str, str] = {}
    for paper in papers:
        line = paper.source.rpartition(":")[2]
        if paper.paper_id in first_seen:
            title = paper.display_title[:60]
            message = f"duplicate paper {title!r} (first at line {first_seen[paper.paper_id]})"
            raise CorpusError(path, message, line=int(line))
        first_seen[paper.paper_id] = line


def shipped_seeds_dir() -> Path:
    """The seed corpus that ships with citeqa (inside the wheel, or the repository's `seeds/`)."""
    packaged = Path(__file__).parent / "_data" / "seeds"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "seeds"
