"""Property tests: the parsers and the splitter never crash and keep spans inside the text."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.chunking import Chunker
from assistant.corpus import Paper, normalize_whitespace
from assistant.errors import CorpusError
from assistant.grounding import parse_citations, split_claims
from assistant.readers import seeds
from assistant.settings import ChunkSettings
from assistant.text import sentence_spans, split_sentences

PIECES = [*"abcdefgh XYZ.,;!?[]0123456789-()\n\t。", "e.g. ", " et al. ", "[1]", "[2, 9]", "Dr. "]
PROSE = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)
ANY_TEXT = st.one_of(PROSE, st.text(max_size=300))
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
    claims, _, _ = split_claims(text, n_sources)
    for claim in claims:
        assert claim.text.strip()
        assert all(0 <= index < n_sources for index in claim.cited)


@FAST
@given(st.lists(ANY_TEXT, max_size=6), st.sampled_from(["\n\n", "\n \n", "\r\n\r\n"]))
def test_seed_parser_returns_records_or_a_corpus_error(paragraphs, separator):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "000_seed.txt"
        path.write_text(separator.join(["Header", *paragraphs]), encoding="utf-8")
        try:
            records = seeds.read(path)
        except CorpusError as exc:
            assert "000_seed.txt" in str(exc)
            return
        joined = normalize_whitespace(" ".join(paragraphs))
        for record in records:
            assert record.abstract and record.abstract in joined


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
