"""Property tests: the parsers and the splitter never crash and keep spans inside the text;
garbage files and command lines get papers or one sentence, never a traceback."""

from __future__ import annotations

import json
import shutil
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from assistant.answering.claims import parse_citations, read_draft
from assistant.chunking import Chunker
from assistant.cli import app
from assistant.corpus import Paper, load_corpus, normalize_whitespace
from assistant.errors import CorpusError
from assistant.readers import seeds
from assistant.settings import ChunkSettings
from assistant.text import sentence_spans, split_sentences

PIECES = [*"abcdefgh XYZ.,;!?[]0123456789-()\n\t。", "e.g. ", " et al. ", "[1]", "[2, 9]", "Dr. "]
PROSE = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)
ANY_TEXT = st.one_of(PROSE, st.text(max_size=300))
WORDS = ["we", "study", "the", "model", "learns", "a", "graph", "with", "noise", "and", "data"]
SENTENCE = st.lists(st.sampled_from(WORDS), min_size=12, max_size=40).map(" ".join)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(ANY_TEXT)
def test_sentence_spans_are_ordered_and_inside_the_text(text):
    spans = sentence_spans(text)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        previous_end = end
    if spans:
        assert "".join(split_sentences(text)) == text


@FAST
@given(ANY_TEXT, st.integers(min_value=0, max_value=12))
def test_citation_parser_keeps_numbers_in_range(text, n_sources):
    clean, numbers, invalid = parse_citations(text, n_sources)
    assert all(1 <= number <= n_sources for number in numbers)
    assert invalid >= 0
    assert "[1]" not in clean
    for sentence in read_draft(text, n_sources).sentences:
        assert sentence.text.strip() and sentence.checked.strip()
        assert all(0 <= index < n_sources for index in sentence.cited)


def test_seed_parser_returns_records_or_a_corpus_error(tmp_path):
    outcomes = Counter()
    paragraph = st.one_of(ANY_TEXT, SENTENCE)  # SENTENCE is prose: an abstract

    @FAST
    @given(st.lists(paragraph, max_size=6), st.sampled_from(["\n\n", "\n \n", "\r\n\r\n"]))
    def parse(paragraphs, separator):
        path = tmp_path / "000_seed.txt"
        path.write_text(separator.join(["Header", *paragraphs]), encoding="utf-8")
        try:
            records = seeds.read(path)
        except CorpusError as exc:
            assert "000_seed.txt" in str(exc)
            outcomes["error"] += 1
            return
        joined = normalize_whitespace(" ".join(paragraphs))
        for record in records:
            assert record.abstract and record.abstract in joined
        outcomes["records" if records else "none"] += 1

    parse()
    assert outcomes["records"] >= 20 and outcomes["error"] >= 20, outcomes


@settings(max_examples=60, deadline=None)
@given(PROSE.filter(lambda text: text.strip()))
def test_chunk_spans_stay_inside_the_abstract(text):
    abstract = normalize_whitespace(text)
    chunks = Chunker(ChunkSettings(chunk_tokens=24, overlap_tokens=4)).chunk(
        Paper(paper_id="p", abstract=abstract)
    )
    for chunk in chunks:
        assert 0 <= chunk.start <= chunk.end <= len(abstract)
        assert abstract[chunk.start : chunk.end] == chunk.text
        for start, end in chunk.sentences:
            assert chunk.start <= start <= end <= chunk.end


# ---- garbage corpus files and command lines ---------------------------------------------

JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
FIELDS = st.sampled_from(["title", "abstract", "authors", "venue", "url", "area", "x"])
GOOD_ROW = st.fixed_dictionaries(
    {"title": st.text(min_size=1, max_size=30), "abstract": SENTENCE.map(lambda s: s + ".")},
    optional={"authors": st.lists(st.text(max_size=20), max_size=3), "venue": st.text()},
)
JSONL_LINE = st.one_of(
    GOOD_ROW.map(json.dumps),
    st.dictionaries(FIELDS, JSON_VALUE, max_size=4).map(json.dumps),  # wrong types
    JSON_VALUE.map(json.dumps),
    st.integers(1, 100_000).map(lambda depth: "[" * depth),  # deep nesting
    st.integers(20_000, 200_000).map(lambda n: json.dumps({"title": "T", "abstract": "w " * n})),
    st.just("9" * 5000),  # a number longer than Python parses
    st.text(max_size=60),
)
JSONL = st.one_of(
    st.lists(JSONL_LINE, min_size=1, max_size=4).map("\n".join).map(str.encode),
    st.lists(GOOD_ROW.map(json.dumps), min_size=1, max_size=3).map("\n".join).map(str.encode),
    st.binary(max_size=200),
)
SEED_TXT = st.one_of(
    st.lists(st.one_of(SENTENCE, st.text(max_size=80)), max_size=4)
    .map(lambda paragraphs: "\n\n".join(["Header", *paragraphs]))
    .map(str.encode),
    st.binary(max_size=200),
)
FIELD_TEXT = st.text(max_size=40)  # braces, quotes, backslashes and newlines included
BIB_ENTRY = st.builds(
    "@article{{k{}, title = {{{}}}, author = {{{}}}, year = {}, abstract = {{{}}}}}".format,
    st.integers(0, 99),
    FIELD_TEXT,
    FIELD_TEXT,
    st.one_of(st.integers(), st.text(max_size=6)),
    SENTENCE,
)
RIS_ENTRY = st.builds(
    "TY  - JOUR\nTI  - {}\nAU  - {}\nPY  - {}\nAB  - {}\nER  - \n".format,
    FIELD_TEXT,
    FIELD_TEXT,
    st.text(max_size=6),
    SENTENCE,
)


def _openreview(value: st.SearchStrategy) -> st.SearchStrategy:
    """A field of an OpenReview note: plain (API 1), wrapped (API 2), or of a wrong type."""
    return st.one_of(value, value.map(lambda v: {"value": v}), JSON_VALUE)


NOTE = st.fixed_dictionaries(
    {
        "content": st.fixed_dictionaries(
            {"title": _openreview(FIELD_TEXT), "abstract": _openreview(SENTENCE)}
        ),
        # milliseconds since 1970: a real one, far out of range, or not a number at all
        "pdate": st.one_of(st.sampled_from([1.7e12, 1e300, 10**20]), st.floats(), JSON_VALUE),
    },
    optional={"forum": JSON_VALUE},
)


def _export(entries) -> st.SearchStrategy[bytes]:
    """Files of well-formed entries (whose fields may still be garbage), text, or bytes."""
    return st.one_of(entries, st.text(max_size=200).map(str.encode), st.binary(max_size=200))


BIB = _export(st.lists(BIB_ENTRY, min_size=1, max_size=3).map("\n\n".join).map(str.encode))
RIS = _export(st.lists(RIS_ENTRY, min_size=1, max_size=3).map("\n".join).map(str.encode))
JSON_EXPORT = st.one_of(
    st.lists(NOTE, min_size=1, max_size=2).map(json.dumps).map(str.encode), JSONL
)
CORPUS_FILE = st.one_of(
    st.tuples(st.just("corpus.jsonl"), JSONL),
    st.tuples(st.just("000_seed.txt"), SEED_TXT),
    st.tuples(st.just("library.bib"), BIB),
    st.tuples(st.just("export.ris"), RIS),
    st.tuples(st.just("export.json"), JSON_EXPORT),
)


def test_any_corpus_file_gives_papers_or_a_corpus_error(tmp_path):
    outcomes = Counter()

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(CORPUS_FILE)
    def parse(corpus_file):
        name, data = corpus_file
        path = tmp_path / name
        path.write_bytes(data)
        try:
            papers = load_corpus([path])
        except CorpusError as exc:
            assert name in str(exc)
            outcomes["error"] += 1
            return
        assert papers and all(paper.abstract for paper in papers)
        outcomes["papers"] += 1

    parse()
    assert outcomes["papers"] >= 20 and outcomes["error"] >= 20, outcomes


def _outcome(result) -> int:
    """The exit code, after checking the run ended as a user may see it: 0, or 1 with one
    line on stderr, and never an uncaught exception."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError("uncaught exception") from result.exception
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr
    if result.exit_code == 1:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return result.exit_code


TEXT_ARG = st.text(max_size=300).filter(lambda text: not text.startswith("~"))
OPTION_VALUE = st.one_of(st.integers(-5, 100).map(str), st.text(max_size=10))
SEARCH_ARGS = st.tuples(
    st.one_of(TEXT_ARG, SENTENCE),
    st.lists(
        st.one_of(
            st.tuples(st.sampled_from(["--k", "-k"]), OPTION_VALUE),
            st.tuples(
                st.sampled_from(["--venue", "--author", "--area", "--source"]), st.text(max_size=20)
            ),
            st.tuples(st.just("--year"), OPTION_VALUE),
            st.tuples(st.sampled_from(["--json", "--nope", "-x"])),
        ),
        max_size=3,
    ),
).map(lambda case: ["search", case[0], *(part for option in case[1] for part in option)])
INGEST_ARGS = st.tuples(
    st.lists(
        st.sampled_from(["--sync", "--rebuild", "--json", "--format=bibtex", "--format=nope"]),
        max_size=2,
        unique=True,
    ),
    st.lists(st.one_of(st.just("@corpus"), TEXT_ARG.map("nx-{}".format)), min_size=1, max_size=2),
).map(lambda case: ["ingest", *case[0], *case[1]])
PAPERS_OPTIONS = ["--json", "--all", "extra", "--year=2024", "--year=last", "--source=seed"]
PAPERS_ARGS = st.lists(st.sampled_from(PAPERS_OPTIONS), max_size=2).map(
    lambda options: ["papers", *options]
)
DATA_DIRS = st.sampled_from(["index", "index", "index", "a-file", "a-file/below", "/proc/x"])


def test_garbage_command_lines_exit_0_or_1_with_one_sentence(
    tmp_path_factory, seeded_dir, monkeypatch
):
    root = tmp_path_factory.mktemp("garbage-cli")
    (root / "cwd").mkdir()
    monkeypatch.chdir(root / "cwd")  # relative paths name nothing
    shutil.copytree(seeded_dir, root / "index", ignore=shutil.ignore_patterns("ingest.lock"))
    (root / "a-file").write_text("not a folder\n")
    runner, outcomes = CliRunner(), Counter()

    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,  # the same command lines every run: the count below is stable
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.one_of(SEARCH_ARGS, INGEST_ARGS, PAPERS_ARGS), CORPUS_FILE, DATA_DIRS)
    def run(args, corpus_file, data_dir):
        name, data = corpus_file
        (root / name).write_bytes(data)
        args = [str(root / name) if arg == "@corpus" else arg for arg in args]
        result = runner.invoke(app, args, env={"CITEQA_DATA_DIR": str(root / data_dir)})
        outcomes[_outcome(result)] += 1

    run()
    assert outcomes[0] >= 10 and outcomes[1] >= 10, outcomes  # both paths were exercised
