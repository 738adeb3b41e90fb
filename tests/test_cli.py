"""The `citeqa` command as a user runs it: subprocesses, JSON shapes, exit codes."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import run_citeqa

from assistant.corpus import shipped_seeds_dir

SEEDS = shipped_seeds_dir()


def citeqa(data_dir, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = run_citeqa(data_dir, *args)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_search_json_shape(seeded_dir):
    hits = json.loads(citeqa(seeded_dir, "search", "neural collapse", "--json", "--k", "3").stdout)
    assert len(hits) == 3
    for hit in hits:
        assert {"paper_id", "title", "authors", "venue", "text", "score"} <= hit.keys()
    assert hits[0]["score"] >= hits[-1]["score"]


def test_search_filters_from_the_command_line(seeded_dir):
    out = citeqa(seeded_dir, "search", "training", "--venue", "ICML", "--author", "zhao", "--json")
    hits = json.loads(out.stdout)
    assert hits and all(h["venue"] == "ICML 2024" for h in hits)
    assert all(any("zhao" in a.lower() for a in h["authors"]) for h in hits)


def test_papers_json_shape(seeded_dir):
    papers = json.loads(citeqa(seeded_dir, "papers", "--json").stdout)
    assert len(papers) == 76
    for paper in papers:
        assert {"paper_id", "title", "authors", "venue", "url", "abstract"} <= paper.keys()
        assert {"year", "source", "also_in", "doi", "links"} <= paper.keys()
    years = [paper["year"] for paper in papers]
    assert years.count(2024) == 75 and years.count(None) == 1  # the untitled seed: no venue
    assert {paper["source"] for paper in papers} == {path.name for path in SEEDS.glob("*.txt")}


LIBRARY = r"""@inproceedings{zhao2024galore,
  title = {{GaLore}: {Memory}-{Efficient} {LLM} {Training} by {Gradient} {Low}-{Rank} {Projection}},
  author = {Zhao, Jiawei and others},
  year = {2024},
  abstract = {A shorter abstract of GaLore.},
}

@article{mine2023,
  title = {A {Paper} of {Mine} on {Sparse} {Probing}},
  author = {M{\"u}ller, J{\"o}rg},
  journal = {Journal of Tests},
  month = mar,
  year = 2023,
  abstract = {We probe sparse features of language models with linear classifiers.},
}

@misc{noabstract2022,
  title = {Cited But Never Read},
  year = {2022},
}
"""


def test_ingest_a_bib_file_reports_skipped_entries_and_duplicates(fresh_dir, tmp_path):
    library = tmp_path / "my library.bib"
    library.write_text(LIBRARY, encoding="utf-8")
    out = citeqa(fresh_dir, "ingest", str(library)).stdout
    assert "1 added, 1 updated, 0 removed, 0 unchanged papers" in out  # GaLore gains a year
    assert "my library.bib: 1 entry without an abstract skipped" in out
    assert "1 paper found more than once" in out
    assert "merged my library.bib:1 (same title)" in out
    mine = json.loads(citeqa(fresh_dir, "papers", "--json", "--year", "2023").stdout)
    assert [(p["title"], p["authors"], p["source"]) for p in mine] == [
        ("A Paper of Mine on Sparse Probing", ["Jörg Müller"], "my library.bib")
    ]
    from_library = json.loads(citeqa(fresh_dir, "papers", "--json", "--source", "library").stdout)
    galore = next(p for p in from_library if p["title"].startswith("GaLore"))
    assert galore["source"].startswith("002_") and galore["also_in"] == ["my library.bib"]
    assert len(from_library) == 2
    hits = json.loads(
        citeqa(fresh_dir, "search", "sparse probing", "--source", "library", "--json").stdout
    )
    assert hits and {hit["paper_id"] for hit in hits} <= {p["paper_id"] for p in from_library}


def test_format_option_and_its_errors(fresh_dir, tmp_path):
    export = tmp_path / "export.txt"
    export.write_text(LIBRARY, encoding="utf-8")
    assert "1 added" in citeqa(fresh_dir, "ingest", "--format", "bibtex", str(export)).stdout
    result = citeqa(fresh_dir, "ingest", "--format", "endnote", str(export), check=False)
    assert result.returncode == 1 and "unknown format 'endnote'; choose one of" in result.stderr
    broken = tmp_path / "broken.bib"
    broken.write_text(LIBRARY.replace("{Probing}},", "{Probing},"), encoding="utf-8")
    result = citeqa(fresh_dir, "ingest", str(broken), check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "broken.bib, line 8: is not valid BibTeX" in result.stderr


def test_ingest_prints_a_summary_and_is_incremental(fresh_dir):
    out = citeqa(fresh_dir, "ingest").stdout
    assert "0 added, 0 updated, 0 removed, 76 unchanged" in out


@pytest.mark.parametrize("question", ["", "   ", "?!?..."])
def test_bad_questions_exit_non_zero_with_one_sentence(seeded_dir, question):
    result = citeqa(seeded_dir, "search", question, check=False)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_broken_corpus_file_message(fresh_dir, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"title": "a", "abstract": "b"}\n\xff\n')
    result = citeqa(fresh_dir, "ingest", str(bad), check=False)
    assert result.returncode == 1
    assert "bad.jsonl, line 2: is not UTF-8 text" in result.stderr


@pytest.mark.parametrize("command", [[], ["ingest"], ["search"], ["papers"]])
def test_help_on_every_command(seeded_dir, command):
    assert "Usage" in citeqa(seeded_dir, *command, "--help").stdout
