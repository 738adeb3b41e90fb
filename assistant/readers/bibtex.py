"""BibTeX (`.bib`) as Zotero, JabRef, Mendeley and Google Scholar export it, read with
bibtexparser v2: `@string` macros resolved, `@comment`/`@preamble` ignored, field names in
any case, names ("Last, First and ...", "and others") split the way BibTeX does, LaTeX
decoded."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from ..errors import CorpusError
from .base import Record, first_name_first, read_text, year_in
from .latex import latex_to_text

NAME = "bibtex"
EXTENSIONS = (".bib", ".bibtex")
_VENUE_FIELDS = ("booktitle", "journal", "journaltitle", "eventtitle")
_ARXIV_PREFIXES = ("arxiv", "")
_FIRST_SENTENCE = re.compile(r"^[^.\n]*")

logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)  # failures are raised instead


def _entries(path: Path, text: str) -> list:
    """The file's entries, or `CorpusError` at the first block that is not valid BibTeX.
    An entry whose citation key repeats an earlier one is still a paper."""
    import bibtexparser
    from bibtexparser.middlewares import NormalizeFieldKeys
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry

    library = bibtexparser.parse_string(text, append_middleware=[NormalizeFieldKeys()])
    entries = list(library.entries)
    for block in library.failed_blocks:
        if isinstance(block, DuplicateBlockKeyBlock) and isinstance(
            block.ignore_error_block, Entry
        ):
            entries.append(block.ignore_error_block)
            continue
        reason = _FIRST_SENTENCE.match(str(block.error)).group().strip() or "unreadable block"
        raise CorpusError(path, f"is not valid BibTeX ({reason})", line=block.start_line + 1)
    return sorted(entries, key=lambda entry: entry.start_line)


def _value(entry, *names: str) -> str | None:
    for name in names:
        field = entry.fields_dict.get(name)
        if field is not None and isinstance(field.value, str) and field.value.strip():
            return field.value
    return None


def _text(entry, *names: str) -> str | None:
    value = _value(entry, *names)
    return latex_to_text(value) if value else None


def _authors(entry) -> list[str]:
    from bibtexparser.middlewares.names import split_multiple_persons_names

    # accents decoded first (bibtexparser's name splitter mangles a leading `\"U`), braces
    # kept: they hold a name together ("{Google DeepMind}")
    names = split_multiple_persons_names(latex_to_text(_value(entry, "author") or "", True))
    # "A and B and others": the list is cut short, "others" is nobody's name
    return [
        latex_to_text(first_name_first(name))
        for name in names
        if name.strip().casefold() != "others"
    ]


def _arxiv_link(entry) -> str | None:
    eprint = _value(entry, "eprint")
    prefix = (_value(entry, "archiveprefix", "eprinttype") or "").casefold()
    if eprint and prefix in _ARXIV_PREFIXES:
        return f"https://arxiv.org/abs/{eprint.strip().removeprefix('arXiv:')}"
    return None


def _record(entry) -> Record:
    links = [link for link in (_value(entry, "url"), _arxiv_link(entry)) if link]
    return Record(
        line=entry.start_line + 1,
        title=_text(entry, "title"),
        authors=_authors(entry),
        venue=_text(entry, *_VENUE_FIELDS),
        year=year_in(_value(entry, "year", "date")),
        doi=_value(entry, "doi"),
        url=links[0] if links else None,
        links=links[1:],
        abstract=_text(entry, "abstract") or "",
    )


def read(path: Path) -> list[Record]:
    return [_record(entry) for entry in _entries(path, read_text(path))]
