"""The corpus parser: the 76 seed abstracts, their metadata, JSONL corpora, broken files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assistant import CorpusError, load_corpus
from assistant.corpus import MAX_ABSTRACT_CHARS, make_paper_id, shipped_seeds_dir

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
        (b'{"title": "A", "abstract": "x"}\n{"title": "A", "abstract": "y"}\n', "duplicate", 2),
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


def test_a_paper_in_two_files_is_kept_once(tmp_path):
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text(json.dumps({"title": "Same", "abstract": name}) + "\n")
    papers = load_corpus([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])
    assert [p.abstract for p in papers] == ["a.jsonl"]


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        load_corpus([tmp_path / "nope.jsonl"])
