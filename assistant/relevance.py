"""How well a sentence addresses a question: embedding similarity plus coverage of the
question's focus words (the words that say what is asked, not which paper it is about)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from .embeddings import Embedder

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-]*")
_CONTRIBUTION = re.compile(
    r"\b(we|this (paper|work)|our (work|method|approach))\b[^.]*?\b(propose|introduce|present|"
    r"develop|design|show|prove|find)|\b(is|are) (a|an) (new|novel|simple|general)\b",
    re.IGNORECASE,
)
_CONTRIBUTION_BONUS = 0.08
_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how does do did is are was were can could "
    "would should will much many paper papers study studies work works propose proposes "
    "proposed method methods approach use uses used tell me about describe explain give "
    "show shows find finds any some here indexed compared compare between there".split()
)


@cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def _is_name(word: str) -> bool:
    """Method, model and dataset names: capitals after the first letter, or digits."""
    return any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word)


def words(text: str) -> set[str]:
    """Stemmed, lowercased content words of `text`."""
    found = (w for w in _WORD.findall(text) if w.lower() not in _stopwords())
    return set(_stemmer().stemWords([w.lower() for w in found]))


@dataclass(frozen=True)
class Focus:
    """The stemmed words a question asks about, split into names and other words."""

    names: frozenset[str]
    terms: frozenset[str]

    @classmethod
    def of(cls, question: str) -> Focus:
        tokens = [
            w
            for w in _WORD.findall(question)
            if w.lower() not in _stopwords() and w.lower() not in _QUESTION_WORDS
        ]
        stem = _stemmer().stemWord
        names = frozenset(stem(w.lower()) for w in tokens if _is_name(w))
        terms = frozenset(stem(w.lower()) for w in tokens if not _is_name(w)) - names
        return cls(names, terms)

    def name_match(self, sentence_words: set[str]) -> float:
        """Share of the named methods, models or datasets found (1 when none is named)."""
        if not self.names:
            return 1.0
        return len(self.names & sentence_words) / len(self.names)

    def coverage(self, sentence_words: set[str]) -> float:
        """Share of the focus terms (names when there are no other terms) in a sentence."""
        wanted = self.terms or self.names
        if not wanted:
            return 0.0
        return len(wanted & sentence_words) / len(wanted)


class RelevanceScorer:
    """Scores sentences against a question in [0, 1]: a weighted mean of embedding
    similarity and focus-word coverage (plus a little for sentences that state the
    paper's contribution), scaled by the share of named things it mentions
    (a question about GaLore is not answered by a sentence about another method)."""

    def __init__(self, embedder: Embedder, similarity_weight: float = 0.5) -> None:
        self.embedder = embedder
        self.similarity_weight = similarity_weight

    def score(
        self, question: str, sentences: list[str], contexts: list[str] | None = None
    ) -> np.ndarray:
        """Relevance of each sentence; `contexts` (title, authors, venue of each sentence's
        paper) count for the focus words, not for the similarity."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        vectors = self.embedder.embed([question, *sentences])
        similarity = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
        focus = Focus.of(question)
        contexts = contexts or [""] * len(sentences)
        found = [words(s) | words(c) for s, c in zip(sentences, contexts, strict=True)]
        coverage = np.array([focus.coverage(w) for w in found], dtype=np.float32)
        names = np.array([focus.name_match(w) for w in found], dtype=np.float32)
        bonus = np.array([_CONTRIBUTION_BONUS * bool(_CONTRIBUTION.search(s)) for s in sentences])
        weight = self.similarity_weight
        blended = weight * similarity + (1 - weight) * coverage + bonus
        return np.clip(blended, 0.0, 1.0) * names
