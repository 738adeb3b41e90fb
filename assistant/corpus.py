"""Papers: read from files in any supported format (`assistant.readers`), checked, given
stable ids, and merged when the same paper comes from more than one record.

Everything is parsed and validated before anything touches the index, so a broken
file is rejected whole, with its name and line, and nothing is half-written.

Duplicates: two records are the same paper when they share a DOI, an arXiv id or a
title (ignoring case, accents, spacing and punctuation). The record with the longer
abstract is kept (on a tie, the one read first); it takes the other's missing DOI, year,
venue, area and URL, keeps the other's links, and lists where else the paper was found
(`also_in`). The merged paper keeps the id of the record read first.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from .errors import CorpusError
from .readers import Record, corpus_files, normalize_whitespace, reader

__all__ = ["Corpus", "Duplicate", "Paper", "load_corpus", "normalize_whitespace", "read_corpus"]

MAX_ABSTRACT_CHARS = 20_000
_YEAR_IN_VENUE = re.compile(r"\b(19[5-9]\d|2[01]\d\d)\b")
_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)", re.IGNORECASE)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s?#]+?)(?:v\d+)?(?:\.pdf)?(?:[?#].*)?$")
# optional fields added after the first release: left out of the content hash when empty,
# so that papers without them keep their hash (and are not embedded again)
_LATER_FIELDS = ("year", "doi", "links")


def short_authors(authors: list[str], most: int = 3) -> str:
    """'A, B, C et al.' for long author lists."""
    return ", ".join(authors[:most]) + (" et al." if len(authors) > most else "")


def make_paper_id(title: str | None, abstract: str) -> str:
    """A stable id: the same paper gets the same id on every machine and run."""
    key = (
        f"title:{normalize_whitespace(title).casefold()}" if title else f"abstract:{abstract[:200]}"
    )
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


def source_file(source: str) -> str:
    """The file name of a source such as `my.bib:12`."""
    return source.rpartition(":")[0]


class Paper(BaseModel):
    """One paper: its abstract and what is known about it.

    `source` is where the kept record was read (`file:line`); `also_in` where duplicates
    of it were found. `links` are further URLs (an arXiv page, a duplicate's URL)."""

    paper_id: str
    title: str | None = None
    authors: list[str] = Field(default_factory=list)
    venue: str | None = None
    url: str | None = None
    area: str | None = None
    abstract: str
    source: str = ""
    year: int | None = None
    doi: str | None = None
    links: list[str] = Field(default_factory=list)
    also_in: list[str] = Field(default_factory=list)

    @property
    def display_title(self) -> str:
        """The title, or for an untitled paper its authors and first words."""
        if self.title:
            return self.title
        lead = " ".join(self.abstract.split()[:8])
        who = short_authors(self.authors)
        return f"{who}: {lead}…" if who else f"{lead}…"

    @property
    def title_and_abstract(self) -> str:
        """The title (when there is one) and the abstract, as one text to match words in."""
        return f"{self.title or ''} {self.abstract}"

    @property
    def publication_year(self) -> int | None:
        """The year given, else a year in the venue's name ("NeurIPS 2024")."""
        if self.year is not None:
            return self.year
        match = _YEAR_IN_VENUE.search(self.venue or "")
        return int(match.group(1)) if match else None

    @property
    def source_files(self) -> list[str]:
        """The files the paper was found in, the kept record's first."""
        return list(dict.fromkeys(source_file(s) for s in [self.source, *self.also_in]))

    @property
    def content_hash(self) -> str:
        """Changes whenever anything that is indexed about the paper changes (where it was
        found counts by file, not line: moving an entry embeds nothing again)."""
        unset = {name for name in _LATER_FIELDS if not getattr(self, name)}
        payload = self.model_dump_json(exclude={"source", "also_in", *unset})
        if self.also_in:
            payload += json.dumps(sorted(self.source_files))
        return hashlib.sha1(payload.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Duplicate:
    """One paper found more than once: the record kept and the others merged into it."""

    title: str
    kept: str
    merged: tuple[str, ...]
    matched_by: str  # "DOI", "arXiv id" or "title"

    def describe(self) -> str:
        others = ", ".join(self.merged)
        return f"{self.title!r}: kept {self.kept}, merged {others} (same {self.matched_by})"


@dataclass
class Corpus:
    """What a set of files holds: the papers (duplicates merged), the entries skipped
    for lacking an abstract (per file), and the duplicates found."""

    papers: list[Paper]
    skipped: dict[str, int] = field(default_factory=dict)
    duplicates: list[Duplicate] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def _paper(path: Path, record: Record) -> Paper:
    abstract = normalize_whitespace(record.abstract)
    if len(abstract) > MAX_ABSTRACT_CHARS:
        raise CorpusError(
            path,
            f"abstract has {len(abstract):,} characters; the limit is {MAX_ABSTRACT_CHARS:,}",
            line=record.line,
        )
    title = normalize_whitespace(record.title) if record.title else None
    doi = _DOI.search(record.doi or "")
    return Paper(
        paper_id=make_paper_id(title, abstract),
        title=title or None,
        # scraped author lists carry HTML entities: 'Zhangyang &quot;Atlas&quot; Wang'
        authors=[
            normalize_whitespace(html.unescape(name)) for name in record.authors if name.strip()
        ],
        venue=normalize_whitespace(record.venue) if record.venue else None,
        url=record.url.strip() if record.url else None,
        area=normalize_whitespace(record.area) if record.area else None,
        abstract=abstract,
        source=f"{path.name}:{record.line}",
        year=record.year,
        doi=doi.group(1).rstrip(".,;") if doi else None,
        links=[link.strip() for link in record.links if link.strip()],
    )


def _read_file(path: Path, format_name: str | None) -> tuple[list[Paper], int]:
    """The papers of one file, and how many of its entries have no abstract."""
    records = reader(path, format_name).read(path)
    if not records:
        raise CorpusError(path, "contains no papers")
    kept = [record for record in records if record.abstract.strip()]
    if not kept:
        raise CorpusError(
            path,
            f"has {len(records)} entries but none with an abstract; citeqa answers from "
            "abstracts, so include them in the export",
        )
    return [_paper(path, record) for record in kept], len(records) - len(kept)


def _expand(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        path = Path(path).expanduser()
        if path.is_dir():
            found = corpus_files(path)
            if not found:
                raise CorpusError(path, "holds no corpus files citeqa reads")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CorpusError(path, "does not exist")
    return files


# ---- duplicates -----------------------------------------------------------------------


def _title_key(title: str | None) -> str | None:
    if not title:
        return None
    decomposed = unicodedata.normalize("NFKD", title)
    key = "".join(char for char in decomposed if char.isalnum()).casefold()
    return key or None


def match_keys(paper: Paper) -> list[tuple[str, str]]:
    """(kind, value) pairs that identify `paper`: its DOI, arXiv id and title."""
    keys: list[tuple[str, str]] = []
    for link in [paper.doi or "", paper.url or "", *paper.links]:
        doi = _DOI.search(link)
        arxiv = _ARXIV_URL.search(link)
        if doi and (arxiv_doi := _ARXIV_DOI.match(doi.group(1))):
            keys.append(("arXiv id", arxiv_doi.group(1).casefold()))
        elif doi:
            keys.append(("DOI", doi.group(1).rstrip(".,;").casefold()))
        if arxiv:
            keys.append(("arXiv id", arxiv.group(1).casefold()))
    if title := _title_key(paper.title):
        keys.append(("title", title))
    return list(dict.fromkeys(keys))


def merge(records: Sequence[Paper]) -> Paper:
    """One paper from records of the same paper (in the order they were read)."""
    kept = max(records, key=lambda paper: len(paper.abstract))  # the first of the longest
    others = [paper for paper in records if paper is not kept]
    filled = {
        name: next((getattr(p, name) for p in [kept, *others] if getattr(p, name)), None)
        for name in ("title", "venue", "url", "area", "year", "doi")
    }
    urls = [url for paper in others for url in (paper.url, *paper.links) if url]
    also_in = [s for paper in others for s in (paper.source, *paper.also_in)]
    return kept.model_copy(
        update={
            **filled,
            "paper_id": records[0].paper_id,
            "authors": kept.authors or next((p.authors for p in others if p.authors), []),
            "links": [u for u in dict.fromkeys([*kept.links, *urls]) if u != filled["url"]],
            "also_in": [s for s in dict.fromkeys([*kept.also_in, *also_in]) if s != kept.source],
        }
    )


def _group(papers: Iterable[Paper]) -> list[tuple[list[Paper], str | None]]:
    """Records grouped by paper (first record first), each with what matched them."""
    groups: list[tuple[list[Paper], str | None]] = []
    where: dict[tuple[str, str], int] = {}
    for paper in papers:
        keys = match_keys(paper)
        found = next(((where[key], key[0]) for key in keys if key in where), None)
        if found is None:
            groups.append(([paper], None))
            index = len(groups) - 1
        else:
            index, kind = found
            records, matched = groups[index]
            groups[index] = ([*records, paper], matched or kind)
        for key in keys:
            where.setdefault(key, index)
    return groups


def _dedupe(papers: Iterable[Paper]) -> tuple[list[Paper], list[Duplicate]]:
    merged, duplicates = [], []
    for records, matched_by in _group(papers):
        paper = merge(records) if len(records) > 1 else records[0]
        merged.append(paper)
        if matched_by:
            others = tuple(r.source for r in records if r.source != paper.source)
            duplicates.append(Duplicate(paper.display_title, paper.source, others, matched_by))
    return merged, duplicates


def read_corpus(paths: Iterable[Path], format_name: str | None = None) -> Corpus:
    """Parse every file (folders: the files in them that a format reads) into papers,
    by extension or as `format_name`, merging duplicates.

    Raises `CorpusError` naming the file and line of the first problem."""
    records: list[Paper] = []
    skipped: dict[str, int] = {}
    files = _expand(paths)
    for path in files:
        papers, without_abstract = _read_file(path, format_name)
        records += papers
        if without_abstract:
            skipped[path.name] = without_abstract
    papers, duplicates = _dedupe(records)
    return Corpus(papers, skipped, duplicates, [path.name for path in files])


def load_corpus(paths: Iterable[Path], format_name: str | None = None) -> list[Paper]:
    """The papers of `read_corpus`."""
    return read_corpus(paths, format_name).papers


def _as_prior(paper: Paper, files: Collection[str]) -> Paper | None:
    """What an indexed paper brings to a new ingest of `files` (what came from those files
    is read again): all of it when its kept record came from another file; only its links
    and metadata (no abstract) when that file is read again but duplicates were found
    elsewhere; nothing when every file it came from is read again."""
    elsewhere = [s for s in paper.also_in if source_file(s) not in files]
    if source_file(paper.source) not in files:
        return paper.model_copy(update={"also_in": elsewhere})
    if not elsewhere:
        return None
    update = {"abstract": "", "source": elsewhere[0], "also_in": elsewhere[1:]}
    return paper.model_copy(update=update)


def merge_with_indexed(corpus: Corpus, indexed: Iterable[Paper]) -> Corpus:
    """`corpus` with each paper merged with the indexed paper it duplicates from other
    files (by the same rule as within one ingest, the indexed one counting as read first),
    so that ingesting files one at a time gives what ingesting them together gives."""
    priors: dict[tuple[str, str], Paper] = {}
    for paper in indexed:
        prior = _as_prior(paper, corpus.files)
        for key in match_keys(prior) if prior else []:
            priors.setdefault(key, prior)
    papers, duplicates = [], list(corpus.duplicates)
    used: set[str] = set()
    for paper in corpus.papers:
        keys = match_keys(paper)
        match = next(((priors[k], k[0]) for k in keys if k in priors), None)
        if match is None or match[0].paper_id in used:
            papers.append(paper)
            continue
        prior, matched_by = match
        used.add(prior.paper_id)
        merged = merge([prior, paper])
        papers.append(merged)
        others = tuple(s for s in (prior.source, paper.source) if s != merged.source)
        duplicates.append(Duplicate(merged.display_title, merged.source, others, matched_by))
    return Corpus(papers, corpus.skipped, duplicates, corpus.files)


def shipped_seeds_dir() -> Path:
    """The seed corpus that ships with citeqa (inside the wheel, or the repository's `seeds/`)."""
    packaged = Path(__file__).parent / "_data" / "seeds"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "seeds"
