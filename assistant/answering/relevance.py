"""How well a sentence addresses a question: embedding similarity of the sentence, plus
coverage of the question's focus words (the words that say what is asked, not which paper
it is about) by the sentence and by its paper, rare words counting more, and whether the
sentence states the thing the question asks for."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..embeddings import Embedder
from ..lexicon import (
    QUESTION_WORDS,
    content_stems,
    content_stems_with_names,
    looks_like_name,
    name_spellings,
    name_stems,
    quantities,
)
from .question import Question
from .support import clauses

# Each thing the question asks for that a sentence leaves out scales its score down, to
# half when it leaves out all of it; so does a paper that mentions under half of a
# description the question identifies a paper by.
_MISSING_PENALTY = 0.5
# A how-many question is not answered by a sentence without a figure, however close.
NO_FIGURE = 0.25
_TOPIC_COVERAGE = 0.5
# Things asked for by kind, that a sentence names rather than calls by the kind's name
# ("which benchmarks ..." is answered by "... on AdvBench and HarmBench").
_NAMED_KINDS = frozenset({"dataset", "benchmark", "baselin", "corpus"})
# Weight of the embedding similarity against the focus-word coverage (fitted when the
# scorer was written, on eval/questions.jsonl's answer sentences).
SIMILARITY_WEIGHT = 0.7
# Clauses are compared for this many of the sentences closest to the question: embedding
# every clause of every candidate would triple the cost of a question.
CLAUSE_CANDIDATES = 8


# "... instead of being fixed by a bottleneck": what the question sets aside is not asked
# (on the tuning sets, eval/questions*.jsonl but _test19, one method answer better, none worse).
_SET_ASIDE = re.compile(r"\b(?:instead of|rather than|as opposed to)\b[^,;:?.]*", re.IGNORECASE)


@dataclass(frozen=True)
class Focus:
    """What a question is about: the names it mentions (methods, models, datasets), the
    other words of the part that asks, the thing it asks for (a learning rate, a number of
    tasks), and whether it wants a figure or asks which one paper fits a description."""

    names: frozenset[str]
    terms: frozenset[str]
    asked_for: frozenset[str] = frozenset()
    wants_number: bool = False
    which_paper: bool = False
    given_figures: frozenset[str] = frozenset()

    @classmethod
    def of(cls, question: Question) -> Focus:
        names = frozenset(name_stems(question.search_text))
        asked = _SET_ASIDE.sub(" ", question.asked)
        focus_words = " ".join(
            word for word in asked.split() if not looks_like_name(word.strip("?,.;:()'\""))
        )
        terms = frozenset(content_stems(focus_words, QUESTION_WORDS)) - names
        return cls(
            names,
            terms,
            question.asked_for,
            question.wants_number,
            question.which_paper,
            question.given_figures,
        )

    def known_to(self, vocabulary: set[str]) -> Focus:
        """This focus where names the passages never mention count as ordinary terms: a
        name may be spelled differently, or be absent because nothing answers."""
        unknown = self.names - vocabulary
        return Focus(
            self.names - unknown,
            self.terms | unknown,
            self.asked_for,
            self.wants_number,
            self.which_paper,
            self.given_figures,
        )

    def name_match(self, found: set[str]) -> float:
        """Share of the named methods, models or datasets found (1 when none is named)."""
        if not self.names:
            return 1.0
        return len(self.names & found) / len(self.names)

    def coverage(self, found: set[str], weight: dict[str, float]) -> float:
        """Weighted share of the focus terms (names when there are no other terms) found."""
        wanted = self.terms or self.names
        if not wanted:
            return 0.0
        return sum(weight[w] for w in wanted & found) / sum(weight[w] for w in wanted)

    def answers_asked_for(self, sentence: str) -> float:
        """How fully the sentence states what the question asks for, in (0, 1]: the thing
        asked for, and a figure for a how-many question."""
        share = 1.0
        if self.asked_for:
            stated = content_stems(sentence)
            if name_stems(sentence) - self.names:
                stated |= _NAMED_KINDS
            share = len(self.asked_for & stated) / len(self.asked_for)
        fit = 1 - _MISSING_PENALTY * (1 - share)
        if self.wants_number and not quantities(sentence) - self.given_figures:
            fit *= NO_FIGURE
        return fit


def _rarity(wanted: Iterable[str], found: list[set[str]]) -> dict[str, float]:
    """Inverse document frequency of the `wanted` words over the candidate sentences: a
    word most candidates share (model, learning) tells less about which one answers."""
    counts = Counter(word for sentence_words in found for word in sentence_words)
    return {word: math.log((len(found) + 1) / (counts[word] + 0.5)) for word in wanted}


def _paper_words(
    contexts: list[str],
    passages: list[str],
    context_words: dict[str, set[str]],
    spellings: dict[str, str],
) -> dict[str, set[str]]:
    """The words of each paper (told apart by its context) in all its passages: a name
    that identifies the paper need not be repeated in every sentence."""
    found = {context: set(words) for context, words in context_words.items()}
    for context, passage in dict.fromkeys(zip(contexts, passages, strict=True)):
        found[context] |= content_stems_with_names(passage, spellings)
    return found


class RelevanceScorer:
    """Scores sentences against a question in [0, 1].

    A weighted mean of the embedding similarity of the sentence (to the question) and
    the coverage of the question's focus words by the sentence and by its paper (rare
    words count more); scaled by the share of named things the paper mentions (a question
    about GaLore is not answered by a paper about another method) and by whether the
    sentence states what is asked for. A question that only names something ("What is
    GaLore?") is answered by any sentence of a paper that mentions it."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def score(
        self,
        question: Question,
        sentences: list[str],
        contexts: list[str] | None = None,
        passages: list[str] | None = None,
    ) -> np.ndarray:
        """Relevance of each sentence; `contexts` (title, authors, venue of each sentence's
        paper) and `passages` (the text each sentence comes from) count for the focus
        words, not for the similarity."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        contexts = contexts or [""] * len(sentences)
        passages = passages or sentences
        spellings = name_spellings(question.search_text)
        context_words = {c: content_stems_with_names(c, spellings) for c in set(contexts)}
        paper = _paper_words(contexts, passages, context_words, spellings)
        focus = Focus.of(question).known_to(set().union(*paper.values()))
        found = [
            content_stems_with_names(s, spellings) | context_words[c]
            for s, c in zip(sentences, contexts, strict=True)
        ]
        weight = _rarity(focus.terms | focus.names, found)
        paper_coverage = np.array([focus.coverage(paper[c], weight) for c in contexts])
        coverage = (np.array([focus.coverage(w, weight) for w in found]) + paper_coverage) / 2
        if focus.terms:
            similarity = self.similarity(question, sentences)
            blended = SIMILARITY_WEIGHT * similarity + (1 - SIMILARITY_WEIGHT) * coverage
        else:
            blended = coverage
        fit = np.array([focus.answers_asked_for(s) for s in sentences])
        if focus.which_paper:
            fit *= 1 - _MISSING_PENALTY * (1 - np.minimum(1, paper_coverage / _TOPIC_COVERAGE))
        names = np.array([focus.name_match(paper[c]) for c in contexts])
        return np.clip(blended, 0.0, 1.0) * names * fit

    def similarity(self, question: Question, sentences: list[str]) -> np.ndarray:
        """Cosine similarity of the question to each sentence or, for the sentences closest
        to it, one of their clauses (a long sentence may answer in one of them), clipped at
        0; a question of several sentences is close to a text when its last one alone is."""
        probes = list(dict.fromkeys([question.search_text, question.asked]))
        vectors = self.embedder.embed([*probes, *sentences])
        scores = (vectors[len(probes) :] @ vectors[: len(probes)].T).max(axis=1)
        closest = np.argsort(-scores)[:CLAUSE_CANDIDATES]
        parts = {int(i): clauses(sentences[i]) for i in closest}
        texts = [text for group in parts.values() for text in group]
        if texts:
            closeness = iter(
                (self.embedder.embed(texts) @ vectors[: len(probes)].T).max(axis=1).tolist()
            )
            for i, group in parts.items():
                for _ in group:
                    scores[i] = max(scores[i], next(closeness))
        return np.clip(scores, 0.0, 1.0)
