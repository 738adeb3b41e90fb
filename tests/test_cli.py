"""The `citeqa` command as a user runs it: subprocesses, JSON shapes, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import FILTER_CASES, passes_filter, run_citeqa, write_abstracts

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


@pytest.fixture(scope="module")
def listed_papers(seeded_dir) -> dict[str, dict]:
    """`citeqa papers --json` of the seeded index, by paper id."""
    listed = json.loads(citeqa(seeded_dir, "papers", "--json").stdout)
    return {paper["paper_id"]: paper for paper in listed}


@pytest.mark.parametrize(("question", "option", "value"), FILTER_CASES)
def test_ask_filters_restrict_the_cited_papers(seeded_dir, listed_papers, question, option, value):
    papers = listed_papers

    def cited(*options: str) -> list[dict]:
        args = ["ask", question, "--backend", "extractive", "--json", *options]
        answer = json.loads(citeqa(seeded_dir, *args).stdout)
        assert not answer["refused"], answer
        return [papers[citation["paper_id"]] for citation in answer["citations"]]

    # without the filter, papers outside it are retrieved for the question
    hits = json.loads(citeqa(seeded_dir, "search", question, "--json").stdout)
    assert not all(passes_filter(papers[hit["paper_id"]], option, value) for hit in hits)
    assert all(passes_filter(paper, option, value) for paper in cited(f"--{option}", value))


def test_chat_over_stdin_follows_up_clears_and_quits_on_eof(seeded_dir):
    turns = [
        "which papers study neural collapse?",
        "and in language models?",  # a follow-up: read with the first question
        "/clear",
        "and in language models?",  # the same words, now without history
        "what does GaLore do?",
    ]
    result = subprocess.run(
        [sys.executable, "-m", "assistant", "chat", "--backend", "extractive"],
        input="\n".join(turns) + "\n",  # then EOF
        capture_output=True,
        text=True,
        env={**os.environ, "CITEQA_DATA_DIR": str(seeded_dir)},
        timeout=300,
        cwd=str(seeded_dir),
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    _intro, *outputs = result.stdout.split("you> ")
    assert len(outputs) == len(turns) + 1  # a last prompt, answered by EOF
    first, follow_up, cleared, alone, galore, after_eof = outputs
    neural_collapse = "Linguistic Collapse: Neural Collapse in (Large) Language Models"
    assert "References" in first and neural_collapse in first
    assert "References" in follow_up and neural_collapse in follow_up
    assert "Fool Your (Vision and) Language Model" not in follow_up
    assert cleared == "" and after_eof.strip() == ""
    # the history is gone: the same words alone ask about language models in general
    assert "References" in alone and neural_collapse not in alone
    assert "References" in galore and "[1] GaLore: Memory-Efficient LLM Training" in galore


def _titles(data_dir) -> set[str]:
    return {paper["title"] for paper in json.loads(citeqa(data_dir, "papers", "--json").stdout)}


def test_ingest_sync_keeps_only_the_papers_given(fresh_dir, tmp_path):
    corpus = write_abstracts(tmp_path / "three.jsonl", 3)
    titles = {json.loads(line)["title"] for line in corpus.read_text().splitlines()}
    out = citeqa(fresh_dir, "ingest", "--sync", str(corpus)).stdout
    assert "3 added, 0 updated, 76 removed, 0 unchanged papers" in out
    assert _titles(fresh_dir) == titles
    hits = json.loads(citeqa(fresh_dir, "search", "neural collapse", "--json").stdout)
    assert hits and {hit["title"] for hit in hits} <= titles


def test_ingest_rebuild_applies_new_chunk_settings(fresh_dir, tmp_path):
    corpus = write_abstracts(tmp_path / "three.jsonl", 3)
    titles = {json.loads(line)["title"] for line in corpus.read_text().splitlines()}
    wider = {"CITEQA_CHUNKING__CHUNK_TOKENS": "300"}
    refused = run_citeqa(fresh_dir, "search", "model merging", **wider)
    assert refused.returncode == 1 and "citeqa ingest --rebuild" in refused.stderr
    out = run_citeqa(fresh_dir, "ingest", "--rebuild", str(corpus), **wider)
    assert out.returncode == 0, out.stderr
    assert "3 added, 0 updated, 0 removed, 0 unchanged papers" in out.stdout
    hits = json.loads(run_citeqa(fresh_dir, "search", "model merging", "--json", **wider).stdout)
    assert hits and {hit["title"] for hit in hits} <= titles
    assert run_citeqa(fresh_dir, "papers", **wider).stdout.strip().endswith("3 papers")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["search", "x", "--k", "0"], "--k"),
        (["search", "x", "--k", "many"], "--k"),
        (["search"], "Missing argument"),
        (["papers", "--colour"], "No such option: --colour"),
        (["index"], "No such command 'index'"),
    ],
)
def test_a_wrong_command_line_is_one_sentence_and_exit_1(seeded_dir, args, needle):
    result = citeqa(seeded_dir, *args, check=False)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert needle in result.stderr
