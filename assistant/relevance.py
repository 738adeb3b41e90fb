"""How well a sentence addresses a question: embedding similarity of the sentence and of its
passage, plus coverage of the question's focus words (the words that say what is asked,
not which paper it is about), rare words counting more, and whether the sentence states
the thing the question asks for."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np

from .embeddings import Embedder
from .text import sentence_spans

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-]*")
_ACRONYM_PLURAL = re.compile(r"^([A-Z][A-Z0-9\-]*[A-Z0-9])s$")


def _word_set(listing: str) -> frozenset[str]:
    return frozenset(listing.split())


_QUESTION_WORDS = _word_set(
    "what which who whom whose when where why how does do did is are was were can could "
    "would should will much many paper papers study studies work works propose proposes "
    "proposed method methods approach approaches use uses used tell me about describe "
    "explain give show shows find finds any some here indexed compared compare between "
    "there has have had having get gets got make makes made from its itself them they their "
    "one ones up so per also just really only very more most than other e g i ie eg s "
    "report reports reported say says said according whether you your we our us "
    "introduce introduces introduced new novel now before"
)
_AUXILIARY = r"(?:is|are|was|were|do|does|did|can|could|would|should|will|has|have|had)"
_NOT_AUXILIARY = rf"(?!{_AUXILIARY}\b)"
# "what learning rate did ...", "how many tasks are ...", "what is the licence of ...":
# the thing a sentence must name to answer.
_ASKED_FOR = re.compile(
    rf"\b(?:what|which|how many)\s+((?:{_NOT_AUXILIARY}[A-Za-z0-9][\w+\-]*\s+){{1,6}}?)"
    rf"{_AUXILIARY}\b"
    r"|\bwhat\s+(?:is|are|was|were)\s+the\s+((?:[A-Za-z0-9][\w+\-]*\s+){1,3}?)"
    r"(?:of|for|in|on|at|that|when|used)\b",
    re.IGNORECASE,
)
_VAGUE_THINGS = _word_set(
    "kind kinds type types sort level degree extent percentage percent number amount "
    "fraction proportion share"
)
# Things asked for by kind, that a sentence names rather than calls by the kind's name
# ("which benchmarks ..." is answered by "... on AdvBench and HarmBench").
_NAMED_KINDS = frozenset({"dataset", "benchmark", "baselin", "corpus"})
_WHICH_PAPER = re.compile(
    rf"\b(?:which|what)\s+(?:{_NOT_AUXILIARY}[\w$-]+\s+){{0,4}}?"
    r"(papers?|works?|study|studies|methods?|approach(?:es)?)\b",
    re.IGNORECASE,
)
_ONE_PAPER = frozenset({"paper", "work", "study", "method", "approach"})
_QUANTITY = re.compile(
    r"\bhow (many|much|large|big|fast|long|often|far)\b|\bwhat (percentage|fraction|share|"
    r"proportion|number)\b|\bby (how much|what)\b|\bto what\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![A-Za-z])\d+(?:[.,]\d+)*(?:%|x|×|dB|[KMB]|GB)?(?![A-Za-z])"
    r"|\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
    r"hundred|thousand|million|billion|twice|half|dozens?)\b",
    re.IGNORECASE,
)
# Each thing the question asks for that a sentence leaves out scales its score down, to
# half when it leaves out all of it; so does a paper that mentions under half of a
# description the question identifies a paper by.
_MISSING_PENALTY = 0.5
# A how-many question is not answered by a sentence without a figure, however close.
_NO_FIGURE = 0.25
_TOPIC_COVERAGE = 0.5


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


def _stems(tokens: Iterable[str]) -> list[str]:
    return _stemmer().stemWords([_normal(token) for token in tokens])


def words(text: str) -> set[str]:
    """Stemmed, lowercased content words of `text`; a hyphenated word also counts as its
    parts, so the name ERM is found in NI-ERM."""
    tokens = [w for w in _WORD.findall(text) if w.lower() not in _stopwords()]
    parts = [part for w in tokens if "-" in w for part in w.split("-") if part]
    return set(_stems(tokens + parts))


def _names(text: str) -> set[str]:
    return set(_stems(w for w in _WORD.findall(text) if _is_name(w)))


def has_number(text: str) -> bool:
    """Whether `text` states a quantity (a figure or a number word, not a digit in a name)."""
    return bool(_NUMBER.search(text))


def asks_quantity(question: str) -> bool:
    """Whether the question asks how many, how much, what percentage..."""
    return bool(_QUANTITY.search(asked_part(question)))


def asks_which_paper(question: str) -> str | None:
    """The noun of a question asking which paper (or papers, methods...) does something."""
    match = _WHICH_PAPER.search(asked_part(question))
    return match.group(1).lower() if match else None


def asked_part(question: str) -> str:
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


def _asked_for(question: str) -> frozenset[str]:
    match = _ASKED_FOR.search(question)
    if not match:
        return frozenset()
    phrase = match.group(1) or match.group(2)
    tokens = [w for w in _focus_tokens(phrase) if w.lower() not in _VAGUE_THINGS]
    return frozenset(_stems(w for w in tokens if not _is_name(w)))


@dataclass(frozen=True)
class Focus:
    """What a question is about: the names it mentions (methods, models, datasets), the
    other words of the part that asks, the thing it asks for (a learning rate, a number
    of tasks), and whether it wants a figure or asks which one paper fits a description."""

    names: frozenset[str]
    terms: frozenset[str]
    asked_for: frozenset[str] = frozenset()
    wants_number: bool = False
    which_paper: bool = False

    @classmethod
    def of(cls, question: str) -> Focus:
        asked = asked_part(question)
        names = frozenset(_names(question))
        terms = frozenset(_stems(w for w in _focus_tokens(asked) if not _is_name(w)))
        return cls(
            names,
            terms - names,
            _asked_for(asked),
            asks_quantity(asked),
            asks_which_paper(asked) in _ONE_PAPER,
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
            stated = words(sentence)
            if _names(sentence) - self.names:
                stated |= _NAMED_KINDS
            share = len(self.asked_for & stated) / len(self.asked_for)
        fit = 1 - _MISSING_PENALTY * (1 - share)
        if self.wants_number and not has_number(sentence):
            fit *= _NO_FIGURE
        return fit


def _rarity(wanted: Iterable[str], found: list[set[str]]) -> dict[str, float]:
    """Inverse document frequency of the `wanted` words over the candidate sentences: a
    word most candidates share (model, learning) tells less about which one answers."""
    counts = Counter(word for sentence_words in found for word in sentence_words)
    return {word: math.log((len(found) + 1) / (counts[word] + 0.5)) for word in wanted}


def _paper_words(contexts: list[str], passages: list[str]) -> dict[str, set[str]]:
    """The words of each paper (told apart by its context) in all its passages: a name
    that identifies the paper need not be repeated in every sentence."""
    found: dict[str, set[str]] = {}
    for context, passage in zip(contexts, passages, strict=True):
        found.setdefault(context, words(context)).update(words(passage))
    return found


class RelevanceScorer:
    """Scores sentences against a question in [0, 1].

    A weighted mean of the embedding similarity of the sentence (to the question) and
    the coverage of the question's focus words by the sentence and by its paper (rare
    words count more); scaled by the share of named things the paper mentions (a question
    about GaLore is not answered by a paper about another method) and by whether the
    sentence states what is asked for. A question that only names something ("What is
    GaLore?") is answered by any sentence of a paper that mentions it."""

    def __init__(
        self,
        embedder: Embedder,
        similarity_weight: float = 0.7,
    ) -> None:
        self.embedder = embedder
        self.similarity_weight = similarity_weight

    def score(
        self,
        question: str,
        sentences: list[str],
        contexts: list[str] | None = None,
        passages: list[str] | None = None,
    ) -> np.ndarray:
        """Relevance of each sentence; `contexts` (title, authors, venue of each sentence's
        paper) and `passages` (the passage each sentence comes from) count for the focus
        words, not for the similarity."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        contexts = contexts or [""] * len(sentences)
        passages = passages or sentences
        paper = _paper_words(contexts, passages)
        focus = Focus.of(question).known_to(set().union(*paper.values()))
        found = [words(s) | words(c) for s, c in zip(sentences, contexts, strict=True)]
        weight = _rarity(focus.terms | focus.names, found)
        paper_coverage = np.array([focus.coverage(paper[c], weight) for c in contexts])
        coverage = (np.array([focus.coverage(w, weight) for w in found]) + paper_coverage) / 2
        blended = self._blend(question, sentences, coverage) if focus.terms else coverage
        fit = np.array([focus.answers_asked_for(s) for s in sentences])
        if focus.which_paper:
            fit *= 1 - _MISSING_PENALTY * (1 - np.minimum(1, paper_coverage / _TOPIC_COVERAGE))
        names = np.array([focus.name_match(paper[c]) for c in contexts])
        return np.clip(blended, 0.0, 1.0) * names * fit

    def _blend(self, question: str, sentences: list[str], coverage: np.ndarray) -> np.ndarray:
        """The weighted mean of sentence similarity and coverage."""
        similarity = self._similarity(question, sentences)
        return self.similarity_weight * similarity + (1 - self.similarity_weight) * coverage

    def _similarity(self, question: str, sentences: list[str]) -> np.ndarray:
        """Cosine similarity of the question to each sentence, clipped at 0; a question of
        several sentences is close to a text when its last one alone is."""
        probes = list(dict.fromkeys([question, asked_part(question)]))
        vectors = self.embedder.embed([*probes, *sentences])
        return _closeness(vectors[: len(probes)], vectors[len(probes) :])


def _closeness(probes: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """The best cosine similarity of each row of `vectors` to any probe, clipped at 0."""
    return np.clip(vectors @ probes.T, 0.0, 1.0).max(axis=1)
