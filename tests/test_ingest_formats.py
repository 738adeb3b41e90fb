"""Ingesting exports into a real index: the same papers from three formats are one set,
duplicates across files and across commands follow one stated rule and are reported, and
an updated export embeds only what changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant import Assistant, Filters, Settings
from assistant.corpus import Duplicate
from assistant.embeddings import OnnxMiniLMEmbedder
from assistant.index import PaperIndex
from bench import exports
from bench.adapters import CountingEmbedder
from bench.corpora import ABSTRACTS_2024

ROWS = exports.read_rows(ABSTRACTS_2024)[1::27][:200]


def _assistant(data_dir: Path) -> Assistant:
    """An `Assistant` whose embedder counts the texts it embeds."""
    settings = Settings(data_dir=data_dir)
    assistant = Assistant(settings)
    assistant.index = PaperIndex(settings, CountingEmbedder(OnnxMiniLMEmbedder()))
    return assistant


def _counts(report) -> tuple[int, int, int, int]:
    return report.added, report.updated, report.removed, report.unchanged


def test_the_same_200_papers_from_three_formats_are_200_papers(tmp_path):
    files = []
    for name, write in (
        ("zotero.bib", exports.bibtex),
        ("zotero.json", exports.csl_json),
        ("zotero.ris", exports.ris),
    ):
        files.append(tmp_path / name)
        files[-1].write_text(write(ROWS), encoding="utf-8")
    assistant = _assistant(tmp_path / "data")
    report = assistant.ingest(files)
    assert len(ROWS) == 200 and _counts(report) == (200, 0, 0, 0)
    assert len(report.duplicates) == 200
    assert all(len(duplicate.merged) == 2 for duplicate in report.duplicates)
    papers = assistant.papers()
    assert len(papers) == 200
    assert all(
        set(paper.source_files) == {"zotero.bib", "zotero.json", "zotero.ris"} for paper in papers
    )
    # one file at a time, as a user re-importing each export would: nothing changes
    embedded = assistant.index.embedder.texts
    for path in [files, *([path] for path in files)]:
        report = assistant.ingest(path)
        assert _counts(report) == (0, 0, 0, 200), path
    assert assistant.index.embedder.texts == embedded
    assert len(assistant.papers()) == 200


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_title_already_indexed_from_another_file_is_merged_by_the_rule(tmp_path):
    """Issue 12: a later command used to replace the first file's paper silently."""
    long = "A long abstract about shared results, with every detail of the method given."
    first = _jsonl(
        tmp_path / "first.jsonl",
        [
            {"title": "Shared Title", "abstract": long, "venue": "ICML 2024"},
            {"title": "Only in the first", "abstract": "Something else entirely."},
        ],
    )
    second = tmp_path / "second.bib"
    second.write_text(
        "@article{s,\n  title = {{Shared} {Title}},\n  doi = {10.5555/shared},\n"
        "  year = {2024},\n  abstract = {A short abstract.},\n}\n"
    )
    assistant = _assistant(tmp_path / "data")
    assistant.ingest([first])
    report = assistant.ingest([second])
    assert report.duplicates == [
        Duplicate("Shared Title", "first.jsonl:1", ("second.bib:1",), "title")
    ]
    assert _counts(report) == (0, 1, 0, 0)  # the DOI and year were added
    shared = next(p for p in assistant.papers() if p.title == "Shared Title")
    assert shared.abstract == long and shared.doi == "10.5555/shared" and shared.year == 2024
    assert shared.source_files == ["first.jsonl", "second.bib"]
    assert len(assistant.papers()) == 2
    # re-ingesting either file, in any order, changes nothing (no flip-flop)
    for path in (first, second, first):
        assert _counts(assistant.ingest([path])) == (0, 0, 0, 2 if path == first else 1)
    # the second export now has the longer abstract: it wins, and says so
    second.write_text(second.read_text().replace("A short abstract.", long + " And more."))
    report = assistant.ingest([second])
    assert _counts(report) == (0, 1, 0, 0)
    assert report.duplicates[0].kept == "second.bib:1"
    shared = next(p for p in assistant.papers() if p.title == "Shared Title")
    assert shared.abstract.endswith("And more.") and shared.venue == "ICML 2024"


def test_the_same_title_in_two_files_of_one_command_is_reported(tmp_path):
    a = _jsonl(tmp_path / "a.jsonl", [{"title": "Same", "abstract": "The first copy."}])
    b = _jsonl(tmp_path / "b.jsonl", [{"title": "same", "abstract": "The longer second copy."}])
    report = _assistant(tmp_path / "data").ingest([a, b])
    assert report.duplicates == [Duplicate("same", "b.jsonl:1", ("a.jsonl:1",), "title")]
    assert _counts(report) == (1, 0, 0, 0)


def test_an_updated_export_embeds_only_what_changed(tmp_path):
    rows = ROWS[:30]
    library = tmp_path / "library.bib"
    library.write_text(exports.bibtex(rows))
    assistant = _assistant(tmp_path / "data")
    assert _counts(assistant.ingest([library])) == (30, 0, 0, 0)
    indexed = {p.paper_id: p.content_hash for p in assistant.papers()}
    changed = dict(rows[3], abstract=rows[3]["abstract"] + " We add a sentence.")
    no_abstract = dict(ROWS[41], abstract="")
    library.write_text(exports.bibtex([*rows[:3], changed, *rows[4:29], ROWS[40], no_abstract]))
    before = assistant.index.embedder.texts
    report = assistant.ingest([library])
    assert _counts(report) == (1, 1, 1, 28)
    assert report.skipped == {"library.bib": 1}
    written = [p for p in assistant.papers() if indexed.get(p.paper_id) != p.content_hash]
    assert len(written) == 2
    chunks = sum(len(assistant.index.chunker.chunk(paper)) for paper in written)
    assert assistant.index.embedder.texts - before == chunks


def test_year_and_source_filter_papers_and_search(tmp_path):
    bib = tmp_path / "mine.bib"
    bib.write_text(exports.bibtex([dict(row, year=2023) for row in ROWS[:3]]))
    jsonl = _jsonl(tmp_path / "more.jsonl", ROWS[3:6])
    assistant = _assistant(tmp_path / "data")
    assistant.ingest([bib, jsonl])
    assert len(assistant.papers(Filters(year=2023))) == 3
    assert len(assistant.papers(Filters(year=2024))) == 3  # "NeurIPS 2024" in the venue
    mine = {p.paper_id for p in assistant.papers(Filters(source="MINE"))}
    assert len(mine) == 3
    hits = assistant.search(ROWS[4]["title"], k=5, source="mine")
    assert hits and {hit.paper_id for hit in hits} <= mine
    assert assistant.search(ROWS[0]["title"], k=5, year=1999) == []


@pytest.mark.parametrize("option", ["sync", "rebuild"])
def test_sync_and_rebuild_read_only_the_given_files(tmp_path, option):
    a = _jsonl(tmp_path / "a.jsonl", [{"title": "Same", "abstract": "A much longer first copy."}])
    b = _jsonl(tmp_path / "b.jsonl", [{"title": "Same", "abstract": "Second copy."}])
    assistant = _assistant(tmp_path / "data")
    assistant.ingest([a])
    report = assistant.ingest([b], **{option: True})
    assert report.duplicates == []
    assert [p.abstract for p in assistant.papers()] == ["Second copy."]
