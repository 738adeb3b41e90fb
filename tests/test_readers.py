"""Every input format, read from files shaped like real exports: written from the shipped
5,564-abstract corpus (`bench.exports`) and hand-written with the quirks real exports have."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from assistant import CorpusError
from assistant.corpus import Paper, normalize_whitespace, read_corpus
from assistant.readers import reader
from assistant.readers.latex import latex_to_text
from bench import exports
from bench.corpora import ABSTRACTS_2024

ROWS = exports.read_rows(ABSTRACTS_2024)[::27][:200]  # 200 papers spread over both venues


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _plain(text: str) -> str:
    """What survives any export: letters and digits without accents, case-folded, LaTeX
    macro names left out (arXiv and BibTeX text is LaTeX: `\\textbf{B}` shows as "B")."""
    decomposed = unicodedata.normalize("NFKD", re.sub(r"\\[a-zA-Z]+", "", text))
    return "".join(char for char in decomposed if char.isalnum()).casefold()


def _check_against_rows(papers: list[Paper], rows: list[dict]) -> None:
    assert len(papers) == len(rows)
    by_title = {_plain(row["title"]): row for row in rows}
    for paper in papers:
        row = by_title[_plain(paper.title)]
        assert _plain(paper.abstract) == _plain(row["abstract"])
        assert [_plain(name) for name in paper.authors] == [_plain(n) for n in row["authors"]]
        assert paper.publication_year == 2024


# ---- exports written from the shipped corpus ------------------------------------------


@pytest.mark.parametrize(
    ("name", "write", "format_name"),
    [
        ("zotero.bib", exports.bibtex, "bibtex"),
        ("zotero.json", exports.csl_json, "csl-json"),
        ("zotero.ris", exports.ris, "ris"),
        ("arxiv-metadata-oai-snapshot.json", exports.arxiv_jsonl, "arxiv"),
        ("slice.jsonl", exports.arxiv_jsonl, "arxiv"),
        ("notes.json", exports.openreview_notes, "openreview"),
    ],
)
def test_exports_of_the_corpus_read_back_whole(tmp_path, name, write, format_name):
    path = _write(tmp_path, name, write(ROWS))
    assert format_name == reader(path).NAME
    corpus = read_corpus([path])
    _check_against_rows(corpus.papers, ROWS)
    assert corpus.skipped == {} and corpus.duplicates == []
    assert all(paper.source.startswith(f"{name}:") for paper in corpus.papers)


def test_exact_text_survives_formats_without_latex(tmp_path):
    for name, write in (("a.json", exports.csl_json), ("a.ris", exports.ris)):
        papers = read_corpus([_write(tmp_path, name, write(ROWS[:20]))]).papers
        for paper, row in zip(papers, ROWS[:20], strict=True):
            assert paper.title == normalize_whitespace(row["title"])
            assert paper.abstract == normalize_whitespace(row["abstract"])
            assert paper.venue == row["venue"] and paper.url == row["url"]


def test_arxiv_snapshot_gives_link_area_and_first_version_year(tmp_path):
    path = _write(tmp_path, "arxiv.jsonl", exports.arxiv_jsonl(ROWS[:3]))
    paper = read_corpus([path]).papers[0]
    assert paper.url == "https://arxiv.org/abs/2405.00001"
    assert paper.area == "cs.LG stat.ML"
    assert paper.venue == "arXiv" and paper.year == 2024


def test_arxiv_authors_string_and_latex_are_decoded(tmp_path):
    row = {
        "id": "0704.0001",
        "authors": "C. Bal\\'azs, E. L. Berger and C.-P. Yuan",
        "title": "Calculation of prompt diphoton production at Tevatron and\n  LHC energies",
        "abstract": "  A fully differential calculation in perturbative QCD is presented.\n",
        "categories": "hep-ph",
        "journal-ref": "Phys.Rev.D76:013009,2007",
        "doi": "10.1103/PhysRevD.76.013009",
        "update_date": "2008-11-13",
    }
    paper = read_corpus([_write(tmp_path, "a.jsonl", json.dumps(row) + "\n")]).papers[0]
    assert paper.authors == ["C. Balázs", "E. L. Berger", "C.-P. Yuan"]
    assert paper.title == "Calculation of prompt diphoton production at Tevatron and LHC energies"
    assert (paper.year, paper.doi, paper.venue) == (
        2008,
        "10.1103/PhysRevD.76.013009",
        "Phys.Rev.D76:013009,2007",
    )


@pytest.mark.parametrize("api", [1, 2])
def test_openreview_notes_in_both_shapes(tmp_path, api):
    text = exports.openreview_notes(ROWS[:5], api=api)
    notes = json.loads(text)
    assert isinstance(notes[0]["content"]["title"], dict) == (api == 2)
    for name, content in (
        ("array.json", text),
        ("lines.jsonl", "\n".join(json.dumps(note) for note in notes) + "\n"),
        ("api.json", json.dumps({"notes": notes, "count": 5}, indent=2)),
    ):
        papers = read_corpus([_write(tmp_path, name, content)]).papers
        _check_against_rows(papers, ROWS[:5])
        assert papers[0].url == "https://openreview.net/forum?id=or00000000"
        assert papers[0].venue == "NeurIPS 2024 poster" and papers[0].area == "generative models"


def test_openreview_record_lines_point_at_each_note(tmp_path):
    path = _write(tmp_path, "notes.json", exports.openreview_notes(ROWS[:3]))
    lines = path.read_text().splitlines()
    for paper in read_corpus([path]).papers:
        line = int(paper.source.rpartition(":")[2])
        assert lines[line - 1].strip() == "{", paper.source
        assert f'"{paper.url.rpartition("=")[2]}"' in lines[line]


# ---- BibTeX with the quirks of real exports --------------------------------------------

QUIRKY_BIB = r"""% Encoding: UTF-8
@comment{jabref-meta: databaseType:bibtex;}
@string{icml = "International Conference on Machine Learning"}
@preamble{"\newcommand{\noopsort}[1]{}"}

@inproceedings{mueller2024,
	title = {{M}$^3${GPT}: {Nested} {Braces} in {M{\"u}ller}'s {Title}},
	author = {M{\"u}ller, J{\"o}rg and van der Berg, Anna and {Google DeepMind} and others},
	booktitle = icml,
	month = jan,
	year = 2024,
	doi = {10.5555/Example.2024.001},
	abstract = {We reduce memory by 5% and \% of {GPU} time -- see {\textless}0.1 \& more.},
}

@article{scholar2023,
  title={A paper with no abstract},
  author={Doe, Jane},
  journal={arXiv preprint arXiv:2301.00001},
  year={2023}
}

@misc{preprint2023,
	Title = {Preprints Have {\'E}prints},
	AUTHOR = {\"Ust\"un, Ahmet and \c{C}a\u{g}lar, Erdem},
	publisher = {arXiv},
	eprint = {2310.01234},
	archivePrefix = {arXiv},
	date = {2023-10-02},
	month = {oct},
	abstract = {An abstract
		over two lines.},
}
"""


def test_bibtex_quirks_are_read_and_cleaned(tmp_path):
    corpus = read_corpus([_write(tmp_path, "library.bib", QUIRKY_BIB)])
    assert corpus.skipped == {"library.bib": 1}
    first, second = corpus.papers
    assert first.title == "M$^3$GPT: Nested Braces in Müller's Title"
    assert first.authors == ["Jörg Müller", "Anna van der Berg", "Google DeepMind"]
    assert first.venue == "International Conference on Machine Learning"
    assert (first.year, first.doi) == (2024, "10.5555/Example.2024.001")
    assert first.abstract == "We reduce memory by 5% and % of GPU time – see <0.1 & more."
    assert first.source == "library.bib:6"
    assert second.title == "Preprints Have Éprints"
    assert second.authors == ["Ahmet Üstün", "Erdem Çağlar"]
    assert second.url == "https://arxiv.org/abs/2310.01234" and second.year == 2023
    assert second.abstract == "An abstract over two lines."


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("@article{a,\n  title = {Unclosed,\n  author = {X},\n}\n@misc{b, title={ok}}\n", 1),
        ("@misc{ok, title={Fine}, abstract={Fine.}}\n\n@article{a,\n  title {no equals}\n}\n", 3),
    ],
)
def test_bibtex_syntax_error_names_the_file_and_line(tmp_path, text, line):
    with pytest.raises(CorpusError) as caught:
        read_corpus([_write(tmp_path, "broken.bib", text)])
    assert caught.value.line == line
    assert str(caught.value).startswith(
        f"{tmp_path / 'broken.bib'}, line {line}: is not valid BibTeX"
    )


def test_a_repeated_citation_key_is_still_a_paper(tmp_path):
    text = (
        "@misc{same, title={First}, abstract={One.}}\n"
        "@misc{same, title={Second}, abstract={Two.}}\n"
    )
    papers = read_corpus([_write(tmp_path, "keys.bib", text)]).papers
    assert [paper.title for paper in papers] == ["First", "Second"]


def test_latex_decoding_keeps_math_and_unknown_text():
    assert latex_to_text(r"$\mathcal{O}(n^2)$ time, {\v{S}}koda and \ss{}") == (
        r"$\mathcal{O}(n^2)$ time, Škoda and ß"
    )
    assert latex_to_text(r"\${\textbackslash}alpha\$ and \{x\}") == r"$\alpha$ and {x}"
    assert latex_to_text("plain 100% text") == "plain 100% text"


# ---- CSL-JSON and RIS quirks ----------------------------------------------------------


def test_csl_json_names_dates_and_missing_abstracts(tmp_path):
    items = [
        {
            "id": "a",
            "type": "article-journal",
            "title": "Literal authors",
            "author": [
                {"literal": "OpenAI"},
                {"family": "Berg", "given": "Anna", "non-dropping-particle": "van der"},
            ],
            "issued": {"date-parts": [["2022", 3]]},
            "event-title": "ICLR",
            "abstract": "Something.",
        },
        {"id": "b", "type": "webpage", "title": "No abstract here", "URL": "https://x.org"},
    ]
    corpus = read_corpus([_write(tmp_path, "lib.json", json.dumps(items, indent="\t"))])
    assert corpus.skipped == {"lib.json": 1}
    (paper,) = corpus.papers
    assert paper.authors == ["OpenAI", "Anna van der Berg"]
    assert (paper.year, paper.venue, paper.source) == (2022, "ICLR", "lib.json:2")


def test_ris_continuation_lines_numbering_and_n2_abstracts(tmp_path):
    text = (
        "1.\nTY  - JOUR\nT1  - Old style title\nA1  - Smith, John\nN2  - An abstract\n"
        "  that continues.\nY1  - 2021/05/01/\nJO  - Journal of Tests\nER  - \n\n"
        "2.\nTY  - CONF\nTI  - No abstract\nAU  - Doe, Jane\nER  - \n"
    )
    corpus = read_corpus([_write(tmp_path, "refs.ris", text)])
    assert corpus.skipped == {"refs.ris": 1}
    (paper,) = corpus.papers
    assert paper.title == "Old style title" and paper.authors == ["John Smith"]
    assert paper.abstract == "An abstract that continues."
    assert (paper.year, paper.venue, paper.source) == (2021, "Journal of Tests", "refs.ris:2")


@pytest.mark.parametrize(
    ("text", "line", "why"),
    [
        ("TY  - JOUR\nTI  - A\nAB  - x\nTY  - JOUR\nTI  - B\nER  - \n", 1, "without ER"),
        ("TY  - JOUR\nTI  - A\nAB  - x\nER  - \nTI  - stray\n", 5, "TI outside"),
        ("TY  - JOUR\nTI  - A\nAB  - x\n", 1, "no ER"),
    ],
)
def test_broken_ris_names_the_line(tmp_path, text, line, why):
    with pytest.raises(CorpusError, match=why) as caught:
        read_corpus([_write(tmp_path, "bad.ris", text)])
    assert caught.value.line == line


# ---- choosing the format ------------------------------------------------------------------


def test_format_is_chosen_by_extension_and_content(tmp_path):
    assert reader(_write(tmp_path, "a.bib", "@misc{a}")).NAME == "bibtex"
    assert reader(_write(tmp_path, "a.jsonl", '{"title": "t", "abstract": "a"}\n')).NAME == "jsonl"
    csl = _write(tmp_path, "c.json", exports.csl_json(ROWS[:2]))
    assert reader(csl).NAME == "csl-json"
    assert reader(csl, "openreview").NAME == "openreview"


def test_format_option_reads_any_extension(tmp_path):
    path = _write(tmp_path, "export.txt", exports.bibtex(ROWS[:3]))
    assert len(read_corpus([path], "bibtex").papers) == 3


@pytest.mark.parametrize(
    ("name", "content", "format_name", "message"),
    [
        ("a.pdf", "x", None, "extension citeqa does not read"),
        ("a.bib", "x", "endnote", "unknown format 'endnote'"),
        ("a.json", "[1, 2]", None, "must hold JSON objects"),
        (
            "a.json",
            '[{"title": "x"},\n {"title": 5, "abstract": "y"}]',
            None,
            "'title' must be a string",
        ),
        ("a.bib", "@misc{a, title={No abstract}}\n", None, "none with an abstract"),
        ("a.bib", "% only a comment\n", None, "contains no papers"),
    ],
)
def test_unreadable_inputs_get_one_sentence(tmp_path, name, content, format_name, message):
    with pytest.raises(CorpusError, match=message) as caught:
        read_corpus([_write(tmp_path, name, content)], format_name)
    assert name in str(caught.value)


def test_folders_hold_every_readable_format(tmp_path):
    _write(tmp_path, "a.bib", exports.bibtex(ROWS[:2]))
    _write(tmp_path, "b.ris", exports.ris(ROWS[2:4]))
    _write(tmp_path, "notes.md", "not a corpus")
    corpus = read_corpus([tmp_path])
    assert corpus.files == ["a.bib", "b.ris"] and len(corpus.papers) == 4
