"""The corpus parser: the 76 seed abstracts, their metadata, JSONL corpora, broken files."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from assistant import CorpusError, Paper, load_corpus
from assistant.corpus import (
    MAX_ABSTRACT_CHARS,
    Duplicate,
    make_paper_id,
    read_corpus,
    shipped_seeds_dir,
)
from bench.corpora import ABSTRACTS_2024

SEEDS = shipped_seeds_dir()


@pytest.fixture(scope="module")
def seeds():
    return load_corpus([SEEDS])


def _raw_abstracts(path: Path) -> list[str]:
    """Independent reading of a seed file: paragraphs longer than 200 characters."""
    paragraphs = re.split(r"\n\s*\n", path.read_text(encoding="utf-8"))
    return [" ".join(p.split()) for p in paragraphs if len(p) > 200]


def test_all_76_seed_abstracts_are_parsed_with_text_unchanged(seeds):
    assert len(seeds) == 76
    expected = [text for path in sorted(SEEDS.glob("*.txt")) for text in _raw_abstracts(path)]
    assert [paper.abstract for paper in seeds] == expected


def test_metadata_is_joined_to_every_seed(seeds):
    rows = [json.loads(line) for line in (SEEDS / "seed_metadata.jsonl").open()]
    by_start = {row["abstract_start"]: row for row in rows}
    for paper in seeds:
        row = by_start[paper.abstract[:80]]
        assert paper.title == row["title"]
        assert paper.url == row["url"]
        assert paper.venue == row["venue"]
    venues = [paper.venue for paper in seeds]
    assert venues.count("ICML 2024") == 19 and venues.count("NeurIPS 2024") == 56


def test_author_names_are_read_without_html_entities(seeds):
    authors = [name for paper in seeds for name in paper.authors]
    assert 'Zhangyang "Atlas" Wang' in authors
    assert not [name for name in authors if re.search(r"&(?:[a-z]+|#x?[0-9a-f]+);", name)]


def test_file_002_carries_authors_and_topics_inline(seeds):
    from_002 = [paper for paper in seeds if paper.source.startswith("002_")]
    assert len(from_002) == 20
    galore = next(paper for paper in from_002 if paper.title and paper.title.startswith("GaLore"))
    assert galore.authors[0] == "Jiawei Zhao"
    assert galore.area is None
    assert any(paper.area == "Reinforcement Learning" for paper in from_002)


def test_the_untitled_paper_is_shown_by_its_authors(seeds):
    untitled = [paper for paper in seeds if paper.title is None]
    assert len(untitled) == 1
    paper = untitled[0]
    assert paper.authors == ["Chi-Heng Lin", "Chiraag Kaushik", "Eva Dyer", "Vidya Muthukumar"]
    assert paper.display_title.startswith("Chi-Heng Lin, Chiraag Kaushik, Eva Dyer et al.: Data")
    assert paper.area == "Theory · Learning Theory"


def test_paper_ids_are_stable_across_runs_and_machines(seeds):
    again = load_corpus([SEEDS])
    assert [p.paper_id for p in seeds] == [p.paper_id for p in again]
    assert len({p.paper_id for p in seeds}) == 76
    galore = next(p for p in seeds if p.title and p.title.startswith("GaLore"))
    # a fixed value: the id is a hash of the title, not of anything machine-specific
    assert galore.paper_id == make_paper_id(galore.title, galore.abstract) == "ba8f44a3cc9d"


def test_jsonl_corpus_with_the_fields_of_abstracts_2024(tmp_path):
    path = tmp_path / "mine.jsonl"
    rows = [
        {
            "title": "A",
            "authors": ["X Y"],
            "abstract": "First  abstract.\nTwo lines.",
            "venue": "V",
        },
        {"title": "B", "authors": "P Q, R S", "abstract": "Second.", "url": "http://u"},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    papers = load_corpus([path])
    assert [p.title for p in papers] == ["A", "B"]
    assert papers[0].abstract == "First abstract. Two lines."
    assert papers[1].authors == ["P Q", "R S"]
    assert papers[1].url == "http://u"


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        (b'{"title": "A", "abstract": "ok"}\n{"title": "B", "abstract": "\xff\xfe"}\n', "UTF-8", 2),
        (b'{"title": "A", "abstract": "ok"}\n{"title": "B", "abs', "not valid JSON", 2),
        (b'{"title": "A", "abstract": "ok"}\n["a list"]\n', "JSON object", 2),
        (b'{"title": "A", "abstract": 5}\n', "abstract", 1),
        (b'{"title": "A", "abstract": "x", "authors": 3}\n', "authors", 1),
        (b"", "empty", None),
        (b"  \n\n", "empty", None),
    ],
)
def test_broken_files_name_the_file_and_line(tmp_path, content, message, line):
    path = tmp_path / "broken.jsonl"
    path.write_bytes(content)
    with pytest.raises(CorpusError) as caught:
        load_corpus([path])
    assert message in str(caught.value)
    assert "broken.jsonl" in str(caught.value)
    assert caught.value.line == line


def test_huge_abstract_is_rejected(tmp_path):
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps({"title": "Big", "abstract": "word " * 40_000}) + "\n")
    with pytest.raises(CorpusError, match=f"limit is {MAX_ABSTRACT_CHARS:,}"):
        load_corpus([path])


def test_a_paper_in_two_files_is_kept_once_and_reported_with_both_sources(tmp_path):
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text(json.dumps({"title": "Same", "abstract": name}) + "\n")
    corpus = read_corpus([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])
    assert [p.abstract for p in corpus.papers] == ["a.jsonl"]  # a tie: the first read is kept
    assert corpus.duplicates == [Duplicate("Same", "a.jsonl:1", ("b.jsonl:1",), "title")]
    assert corpus.papers[0].also_in == ["b.jsonl:1"]


def test_a_paper_twice_in_one_file_is_merged_not_rejected(tmp_path):
    path = tmp_path / "twice.jsonl"
    rows = [{"title": "A", "abstract": "short"}, {"title": "a ", "abstract": "the longer one"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    corpus = read_corpus([path])
    assert [p.abstract for p in corpus.papers] == ["the longer one"]
    assert corpus.duplicates[0].kept == "twice.jsonl:2"


def _bib(tmp_path: Path) -> Path:
    path = tmp_path / "mine.bib"
    path.write_text(
        "@inproceedings{p,\n  title = {The Published Title},\n  author = {Doe, Jane},\n"
        "  booktitle = {ICML 2024},\n  doi = {10.5555/pub.1},\n  url = {https://pub.org/1},\n"
        "  abstract = {Short abstract.},\n}\n"
    )
    return path


def test_same_paper_matched_by_doi_then_arxiv_id_despite_other_titles(tmp_path):
    csl = tmp_path / "zotero.json"
    csl.write_text(
        json.dumps(
            [
                {
                    "title": "Preprint Title, Version One",
                    "DOI": "https://doi.org/10.5555/PUB.1",
                    "URL": "https://arxiv.org/abs/2401.00001v2",
                    "abstract": "A somewhat longer abstract than the others.",
                }
            ]
        )
    )
    arxiv = tmp_path / "arxiv.jsonl"
    arxiv.write_text(
        json.dumps(
            {
                "id": "2401.00001",
                "title": "Yet Another Title",
                "abstract": "Mid abstract.",
                "categories": "cs.LG",
                "authors": "Jane Doe",
            }
        )
        + "\n"
    )
    corpus = read_corpus([_bib(tmp_path), csl, arxiv])
    (paper,) = corpus.papers
    assert paper.abstract == "A somewhat longer abstract than the others."
    assert paper.title == "Preprint Title, Version One" and paper.source == "zotero.json:1"
    assert paper.paper_id == read_corpus([_bib(tmp_path)]).papers[0].paper_id  # first read
    assert paper.doi == "10.5555/PUB.1" and paper.venue == "ICML 2024" and paper.year is None
    assert paper.url == "https://arxiv.org/abs/2401.00001v2"
    assert paper.links == ["https://pub.org/1", "https://arxiv.org/abs/2401.00001"]
    assert paper.area == "cs.LG" and paper.also_in == ["mine.bib:1", "arxiv.jsonl:1"]
    (duplicate,) = corpus.duplicates
    assert duplicate.matched_by == "DOI" and duplicate.merged == ("mine.bib:1", "arxiv.jsonl:1")


def test_new_fields_leave_the_content_hash_of_existing_papers_alone():
    # values computed before year, doi, links and also_in existed: an index built then
    # must not embed its papers again (recomputed once when author names lost their HTML
    # entities, which changed 2 seeds and 13 papers of abstracts_2024)
    seeds = load_corpus([SEEDS])
    galore = next(p for p in seeds if p.title and p.title.startswith("GaLore"))
    assert galore.content_hash == "1e308b47637f081c"
    digest = hashlib.sha1("".join(p.content_hash for p in seeds).encode()).hexdigest()
    assert digest == "8c84c682de17650b8d7531c83f58927910e10e29"
    big = load_corpus([ABSTRACTS_2024])
    digest = hashlib.sha1("".join(p.content_hash for p in big).encode()).hexdigest()
    assert (len(big), digest) == (5564, "f59183ee9c69339014db3f4c60583086d52550ad")
    assert galore.model_copy(update={"year": 2024}).content_hash != galore.content_hash
    # where duplicates were found counts by file, not line
    found_at = [galore.model_copy(update={"also_in": [f"x.bib:{n}"]}) for n in (1, 9)]
    assert found_at[0].content_hash == found_at[1].content_hash != galore.content_hash


def test_publication_year_falls_back_to_the_venue():
    paper = Paper(paper_id="p", abstract="a", venue="NeurIPS 2024")
    assert paper.publication_year == 2024
    assert paper.model_copy(update={"year": 2023}).publication_year == 2023
    assert Paper(paper_id="p", abstract="a", venue="Nature 123").publication_year is None


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        load_corpus([tmp_path / "nope.jsonl"])
