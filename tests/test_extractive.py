"""The extractive backend: which sentences it quotes, and when it refuses."""

from __future__ import annotations

import pytest

from assistant import Assistant
from assistant.backends.base import Source
from assistant.backends.extractive import ExtractiveBackend
from assistant.embeddings import OnnxMiniLMEmbedder
from assistant.relevance import RelevanceScorer
from assistant.settings import AnswerSettings
from assistant.text import sentence_spans

FOONET = (
    "Graph compression matters for large networks. We propose FooNet, a method that "
    "compresses graphs with learned sketches. FooNet saves memory, the main bottleneck of "
    "graph storage, by sketching. It cuts storage by 37% on three benchmarks. Prior "
    "methods store every edge."
)
BARNET = (
    "Sparse graphs are common. In this paper, we introduce BarNet, which compresses "
    "graphs by pruning redundant edges. BarNet keeps accuracy within one point."
)
COOKING = "Bread rises because yeast ferments sugar. Ovens bake the dough evenly."


@pytest.fixture(scope="module")
def relevance() -> RelevanceScorer:
    return RelevanceScorer(OnnxMiniLMEmbedder())


def backend(relevance: RelevanceScorer, **settings) -> ExtractiveBackend:
    return ExtractiveBackend(relevance, AnswerSettings(**settings))


def source(n: int, paper_id: str, title: str, text: str) -> Source:
    return Source(n=n, paper_id=paper_id, title=title, venue="NeurIPS 2024", text=text)


SOURCES = [
    source(1, "foo", "FooNet: Sketching Graphs", FOONET),
    source(2, "bar", "BarNet: Pruning Graph Edges", BARNET),
    source(3, "cook", "A Study of Baking", COOKING),
]


def quoted(chosen: list[tuple[Source, str]]) -> list[str]:
    return [text for _, text in chosen]


def test_a_how_much_question_quotes_the_sentence_with_the_number_first(relevance):
    chosen = backend(relevance).select("How much memory does FooNet save?", SOURCES)
    assert quoted(chosen)[0] == "It cuts storage by 37% on three benchmarks."


def test_a_question_about_a_detail_no_sentence_states_is_refused(relevance):
    assert backend(relevance).select("How many parameters does FooNet have?", SOURCES) == []


def test_a_question_on_a_topic_absent_from_the_passages_is_refused(relevance):
    question = "Which paper proposes a speech recognition method for low-resource languages?"
    assert backend(relevance).select(question, SOURCES) == []


def test_which_papers_quotes_each_answering_paper_once_by_its_contribution(relevance):
    chosen = backend(relevance).select("Which papers propose graph compression methods?", SOURCES)
    assert sorted(s.paper_id for s, _ in chosen) == ["bar", "foo"]
    assert all(text.startswith(("We propose", "In this paper")) for text in quoted(chosen))


@pytest.mark.parametrize("limit", [1, 2])
def test_never_more_sentences_than_max_sentences(relevance, limit):
    chosen = backend(relevance, max_sentences=limit).select("What is FooNet?", SOURCES)
    assert 1 <= len(chosen) <= limit


def test_links_and_code_notes_are_never_quoted(relevance):
    text = "We propose QuxNet for graph compression. Code is available at https://x.org/q."
    sources = [source(1, "qux", "QuxNet", text)]
    assert quoted(backend(relevance).select("What is QuxNet?", sources)) == [
        "We propose QuxNet for graph compression."
    ]


# ---- through the whole chain, on the seeded index -------------------------------------


def test_number_question_on_the_index_answers_with_the_figure(assistant: Assistant):
    answer = assistant.ask(
        "How many pre-trained encoders were studied in the spectral imbalance paper?",
        backend="extractive",
    )
    assert not answer.refused
    assert "11 different state-of-the-art pre-trained encoders" in answer.answer
    # the snippet is the supporting sentence, not the whole (multi-sentence) passage
    assert [len(sentence_spans(c.snippet)) for c in answer.citations] == [1] * len(answer.citations)


def test_a_paraphrased_question_about_a_paper_is_answered_from_it(assistant: Assistant):
    answer = assistant.ask(
        "How does the Householder-based PEFT method build orthogonal matrices?",
        backend="extractive",
    )
    assert "Householder transformations to construct orthogonal matrices" in answer.answer


@pytest.mark.parametrize(
    "question",
    [
        "Which paper proposes a method for music generation?",
        "Which paper designs a quantum algorithm for portfolio optimization?",
        "How many random seeds were used to train each CreNet in the ensemble?",
        "What learning rate schedule does the spectral imbalance paper use to fine-tune encoders?",
        "What dropout rate does C-Flat use?",
    ],
)
def test_questions_the_papers_do_not_answer_are_refused(assistant: Assistant, question):
    answer = assistant.ask(question, backend="extractive")
    assert answer.refused, answer.answer


def test_which_papers_question_cites_several_papers(assistant: Assistant):
    answer = assistant.ask("Which papers study bandit algorithms?", backend="extractive")
    assert len({citation.paper_id for citation in answer.citations}) >= 2
    assert len(answer.sentences) <= assistant.settings.answer.max_sentences
