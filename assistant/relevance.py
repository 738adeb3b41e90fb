"""How well a sentence addresses a question: embedding similarity plus coverage of the
question's focus words (the words that say what is asked, not which paper it is about)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from .embeddings import Embedder
from .text import sentence_spans

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-]*")
_ACRONYM_PLURAL = re.compile(r"^([A-Z][A-Z0-9\-]*[A-Z0-9])s$")
_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how does do did is are was were can could "
    "would should will much many paper papers study studies work works propose proposes "
    "proposed method methods approach use uses used tell me about describe explain give "
    "show shows find finds any some here indexed compared compare between there "
    "has have had having get gets got make makes made from its itself them they their "
    "one ones up so per also just really only very more most than other e g i ie eg s "
    "report reports reported say says said according whether you your we our us".split()
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
    """Method, model and dataset names: capitals after the first letter, or letters and
    digits together (GaLore, XRM, LLaMA-7B, Set5; not 2024)."""
    if word.isdigit():
        return False
    return any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word)


def _normal(word: str) -> str:
    """Lowercase, with an acronym's plural folded into it (LLMs -> llm)."""
    plural = _ACRONYM_PLURAL.match(word)
    return (plural.group(1) if plural else word).lower()


def _stems(tokens: list[str]) -> list[str]:
    return _stemmer().stemWords([_normal(token) for token in tokens])


def words(text: str) -> set[str]:
    """Stemmed, lowercased content words of `text`; a hyphenated word also counts as its
    parts, so the name ERM is found in NI-ERM."""
    tokens = [w for w in _WORD.findall(text) if w.lower() not in _stopwords()]
    parts = [part for w in tokens if "-" in w for part in w.split("-") if part]
    return set(_stems(tokens + parts))


def _asked_part(question: str) -> str:
    """The last sentence of the question: a follow-up rewritten as 'previous question +
    follow-up' asks its last sentence, about what the earlier ones name."""
    spans = sentence_spans(question)
    return question[spans[-1][0] : spans[-1][1]] if len(spans) > 1 else question


def _focus_tokens(text: str) -> list[str]:
    return [
        w
        for w in _WORD.findall(text)
        if w.lower() not in _stopwords() and w.lower() not in _QUESTION_WORDS
    ]


@dataclass(frozen=True)
class Focus:
    """What a question is about: the names it mentions (methods, models, datasets) and
    the other words of the part that asks."""

    names: frozenset[str]
    terms: frozenset[str]

    @classmethod
    def of(cls, question: str) -> Focus:
        names = frozenset(_stems([w for w in _focus_tokens(question) if _is_name(w)]))
        asked = [w for w in _focus_tokens(_asked_part(question)) if not _is_name(w)]
        return cls(names, frozenset(_stems(asked)) - names)

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


def _without_names(text: str) -> str:
    return _WORD.sub(lambda m: "" if _is_name(m.group()) else m.group(), text)


class RelevanceScorer:
    """Scores sentences against a question in [0, 1]: a weighted mean of embedding
    similarity and focus-word coverage, scaled by the share of named things it mentions
    (a question about GaLore is not answered by a sentence about another method).

    When the question names something and also asks about something, the similarity is
    taken with the names left out of the question: the name alone makes every sentence
    of the named paper look similar, whether or not it says what is asked."""

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
        focus = Focus.of(question)
        asked = _asked_part(question)
        probe = _without_names(asked) if focus.names and focus.terms else asked
        vectors = self.embedder.embed([probe, *sentences])
        similarity = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
        contexts = contexts or [""] * len(sentences)
        found = [words(s) | words(c) for s, c in zip(sentences, contexts, strict=True)]
        coverage = np.array([focus.coverage(w) for w in found], dtype=np.float32)
        names = np.array([focus.name_match(w) for w in found], dtype=np.float32)
        weight = self.similarity_weight
        return np.clip(weight * similarity + (1 - weight) * coverage, 0.0, 1.0) * names
