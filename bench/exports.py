"""A corpus written out the way reference managers and archives export it: BibTeX as
Zotero writes it, CSL-JSON, RIS, an arXiv metadata snapshot slice and OpenReview notes
(API 1 and API 2 shapes). The benchmark and the tests read these files back.

Rows are dicts with the fields of `abstracts_2024.jsonl` (title, authors, abstract, venue,
url), optionally `year` and `doi`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from pylatexenc.latexencode import unicode_to_latex

# Zotero's BibTeX export writes these ASCII characters as escapes or macros
_ZOTERO_ESCAPES = {
    "\\": r"{\textbackslash}",
    "{": r"\{",
    "}": r"\}",
    "~": r"{\textasciitilde}",
    "^": r"{\textasciicircum}",
    "<": r"{\textless}",
    ">": r"{\textgreater}",
    "|": r"{\textbar}",
    **{char: "\\" + char for char in "#$%&_"},
}
_KEY_WORD = re.compile(r"[a-z0-9]+")
_YEAR = re.compile(r"\b(20\d\d)\b")
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def read_rows(path: Path, count: int | None = None) -> list[dict]:
    """The first `count` rows (all when None) of a JSONL corpus."""
    rows = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                rows.append(json.loads(line))
            if count is not None and len(rows) == count:
                break
    return rows


def year_of(row: dict) -> int:
    """The row's year, else the one in its venue ("NeurIPS 2024"), else 2024."""
    if row.get("year"):
        return int(row["year"])
    match = _YEAR.search(row.get("venue") or "")
    return int(match.group(1)) if match else 2024


def split_name(name: str) -> tuple[str, str]:
    """(last, first) of "First Middle Last"."""
    first, _, last = name.strip().rpartition(" ")
    return last, first


def zotero_escape(text: str) -> str:
    """`text` as Zotero's BibTeX export escapes it (accents as `{\\"u}`, CJK kept)."""
    escaped = []
    for char in text:
        if char in _ZOTERO_ESCAPES:
            escaped.append(_ZOTERO_ESCAPES[char])
        elif char.isascii():
            escaped.append(char)
        else:
            latex = unicode_to_latex(char, non_ascii_only=True, unknown_char_warning=False)
            escaped.append(char if latex.startswith("{\\ensuremath") else latex)
    return "".join(escaped)


def _protect_case(title: str) -> str:
    """Zotero braces capitalised words so BibTeX styles keep their case: `{GaLore}`."""
    words = title.split(" ")
    return " ".join(
        f"{{{zotero_escape(word)}}}"
        if any(char.isupper() for char in (word[1:] if index == 0 else word))
        else zotero_escape(word)
        for index, word in enumerate(words)
    )


def _cite_key(row: dict, used: set[str]) -> str:
    last = split_name(row["authors"][0])[0] if row.get("authors") else "anonymous"
    words = _KEY_WORD.findall((row.get("title") or "untitled").casefold())
    base = "_".join(
        part for part in (*_KEY_WORD.findall(last.casefold())[:1], *words[:1], str(year_of(row)))
    )
    key, suffix = base, 0
    while key in used:
        suffix += 1
        key = f"{base}{chr(ord('a') + suffix - 1)}"
    used.add(key)
    return key


def bibtex(rows: Sequence[dict]) -> str:
    """Zotero-style BibTeX: tab-indented fields, braced values, `month = jul`, escapes."""
    used: set[str] = set()
    entries = ["@comment{exported by citeqa's benchmark, in the style of Zotero}"]
    for index, row in enumerate(rows):
        authors = " and ".join(
            f"{zotero_escape(last)}, {zotero_escape(first)}" if first else zotero_escape(last)
            for last, first in map(split_name, row.get("authors") or [])
        )
        fields = [
            ("title", _protect_case(row["title"])) if row.get("title") else None,
            ("url", row.get("url")) if row.get("url") else None,
            ("doi", row.get("doi")) if row.get("doi") else None,
            ("abstract", zotero_escape(row["abstract"])) if row.get("abstract") else None,
            ("booktitle", zotero_escape(row["venue"])) if row.get("venue") else None,
            ("author", authors) if authors else None,
            ("month", None),
            ("year", str(year_of(row))),
        ]
        lines = [
            f"\tmonth = {MONTHS[index % 12]}," if value is None else f"\t{name} = {{{value}}},"
            for name, value in (item for item in fields if item)
        ]
        entries.append(f"@inproceedings{{{_cite_key(row, used)},\n" + "\n".join(lines) + "\n}")
    return "\n\n".join(entries) + "\n"


def csl_json(rows: Sequence[dict]) -> str:
    """Zotero's CSL JSON export: an array of items, tab-indented."""
    used: set[str] = set()
    items = []
    for row in rows:
        item = {
            "id": _cite_key(row, used),
            "type": "paper-conference",
            "title": row.get("title"),
            "container-title": row.get("venue"),
            "abstract": row.get("abstract"),
            "URL": row.get("url"),
            "DOI": row.get("doi"),
            "author": [
                {"family": last, "given": first} if first else {"literal": last}
                for last, first in map(split_name, row.get("authors") or [])
            ],
            "issued": {"date-parts": [[str(year_of(row))]]},
        }
        items.append({key: value for key, value in item.items() if value})
    return json.dumps(items, indent="\t", ensure_ascii=False) + "\n"


def ris(rows: Sequence[dict]) -> str:
    """An RIS export (Zotero's tags: TY, TI, AU, T2, AB, PY, DO, UR, ER)."""
    references = []
    for row in rows:
        lines = ["TY  - CONF"]
        lines += [f"TI  - {row['title']}"] if row.get("title") else []
        lines += [f"AU  - {last}, {first}" for last, first in map(split_name, row["authors"])]
        lines += [f"T2  - {row['venue']}"] if row.get("venue") else []
        lines += [f"AB  - {row['abstract']}"] if row.get("abstract") else []
        lines += [f"PY  - {year_of(row)}", f"DA  - {year_of(row)}///"]
        lines += [f"DO  - {row['doi']}"] if row.get("doi") else []
        lines += [f"UR  - {row['url']}"] if row.get("url") else []
        references.append("\n".join([*lines, "ER  - "]))
    return "\n\n".join(references) + "\n"


def arxiv_jsonl(rows: Sequence[dict], first_id: int = 1) -> str:
    """Rows as lines of the arXiv metadata snapshot (ids 2405.00001, …)."""
    lines = []
    for number, row in enumerate(rows, start=first_id):
        names = [split_name(name) for name in row.get("authors") or []]
        record = {
            "id": f"2405.{number:05d}",
            "submitter": row["authors"][0] if row.get("authors") else None,
            "authors": ", ".join(row.get("authors") or []),
            "title": row.get("title"),
            "comments": "10 pages",
            "journal-ref": None,
            "doi": row.get("doi"),
            "report-no": None,
            "categories": row.get("area") or "cs.LG stat.ML",
            "license": "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
            "abstract": f"  {row.get('abstract') or ''}\n",
            "versions": [{"version": "v1", "created": "Mon, 6 May 2024 17:59:59 GMT"}],
            "update_date": "2024-05-07",
            "authors_parsed": [[last, first, ""] for last, first in names],
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def openreview_notes(rows: Sequence[dict], api: int = 2) -> str:
    """Rows as OpenReview submission notes, a JSON array: API 2 wraps every content field
    as `{"value": ...}`, API 1 does not."""
    notes = []
    for number, row in enumerate(rows):
        forum = f"or{number:08d}"
        content = {
            "title": row.get("title"),
            "authors": row.get("authors") or [],
            "authorids": [f"~Author{i}" for i in range(len(row.get("authors") or []))],
            "abstract": row.get("abstract"),
            "venue": f"{row.get('venue') or 'ICLR 2024'} poster",
            "venueid": "NeurIPS.cc/2024/Conference",
            "primary_area": row.get("area") or "generative models",
        }
        if api == 2:
            content = {key: {"value": value} for key, value in content.items()}
        notes.append(
            {
                "id": forum,
                "forum": forum,
                "invitations": ["NeurIPS.cc/2024/Conference/-/Submission"],
                "cdate": 1715000000000,
                "pdate": 1727740800000,
                "content": content,
            }
        )
    return json.dumps(notes, indent=2, ensure_ascii=False) + "\n"


WRITERS = {
    "bib": bibtex,
    "json": csl_json,
    "ris": ris,
}
