"""How well a sentence addresses a question: embedding similarity of the sentence and of its
passage, plus coverage of the question's focus words (the words that say what is asked,
not which paper it is about), weighted by how rare they are among the candidates."""

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
_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how does do did is are was were can could "
    "would should will much many paper papers study studies work works propose proposes "
    "proposed method methods approach approaches use uses used tell me about describe "
    "explain give show shows find finds any some here indexed compared compare between "
    "there has have had having get gets got make makes made from its itself them they their "
    "one ones up so per also just really only very more most than other e g i ie eg s "
    "report reports reported say says said according whether you your we our us "
    "introduce introduces introduced new novel now before".split()
)
_AUXILIARY = r"(?:is|are|was|were|do|does|did|can|could|would|should|will|has|have|had)"
# "what learning rate did ...", "how many tasks are ...", "what is the licence of ...":
# the thing a sentence must name to answer.
_ASKED_FOR = re.compile(
    rf"\b(?:what|which|how many)\s+((?:(?!{_AUXILIARY}\b)[A-Za-z0-9][\w+\-]*\s+){{1,6}}?)"
    rf"{_AUXILIARY}\b"
    r"|\bwhat\s+(?:is|are|was|were)\s+the\s+((?:[A-Za-z0-9][\w+\-]*\s+){1,3}?)"
    r"(?:of|for|in|on|at|that|when|used)\b",
    re.IGNORECASE,
)
_VAGUE_THINGS = frozenset(
    "kind kinds type types sort level degree extent percentage percent number amount "
    "fraction proportion share".split()
)
# Things asked for by kind, that a sentence names rather than calls by the kind's name
# ("which benchmarks ..." is answered by "... on AdvBench and HarmBench").
_NAMED_KINDS = frozenset({"dataset", "benchmark", "baselin", "corpus"})
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
_ASKED_FOR_WEIGHT = 0.5


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


def has_number(text: str) -> bool:
    """Whether `text` states a quantity (a figure or a number word, not a digit in a name)."""
    return bool(_NUMBER.search(text))


def asks_quantity(question: str) -> bool:
    """Whether the question asks how many, how much, what percentage..."""
    return bool(_QUANTITY.search(question))


def _names(text: str) -> set[str]:
    return set(_stems(w for w in _WORD.findall(text) if _is_name(w)))


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
    other words of the part that asks, and the thing it asks for (a learning rate, a
    number of tasks), which an answering sentence must mention."""

    names: frozenset[str]
    terms: frozenset[str]
    asked_for: frozenset[str] = frozenset()
    wants_number: bool = False

    @classmethod
    def of(cls, question: str) -> Focus:
        asked = _asked_part(question)
        names = frozenset(_names(question))
        terms = frozenset(_stems(w for w in _focus_tokens(asked) if not _is_name(w)))
        return cls(names, terms - names, _asked_for(asked), asks_quantity(asked))

    def known_to(self, vocabulary: set[str]) -> Focus:
        """This focus where names the passages never mention count as ordinary terms: a
        name may be spelled differently, or be absent because nothing answers."""
        unknown = self.names - vocabulary
        return Focus(self.names - unknown, self.terms | unknown, self.asked_for, self.wants_number)

    def name_match(self, sentence_words: set[str]) -> float:
        """Share of the named methods, models or datasets found (1 when none is named)."""
        if not self.names:
            return 1.0
        return len(self.names & sentence_words) / len(self.names)

    def coverage(self, sentence_words: set[str], weight: dict[str, float] | None = None) -> float:
        """Weighted share of the focus terms (names when there are no other terms) found."""
        wanted = self.terms or self.names
        if not wanted:
            return 0.0
        weight = weight or {}
        total = sum(weight.get(w, 1.0) for w in wanted)
        return sum(weight.get(w, 1.0) for w in wanted & sentence_words) / total

    def answers_asked_for(self, sentence: str) -> float:
        """How fully the sentence states what the question asks for, in [0, 1] (1 when it
        asks for nothing in particular): the thing asked for, and a figure for how-many
        questions; each missing one halves the score."""
        share = 1.0
        if self.asked_for:
            stated = words(sentence)
            if _names(sentence) - self.names:
                stated |= _NAMED_KINDS
            share = len(self.asked_for & stated) / len(self.asked_for)
        fit = 1 - _ASKED_FOR_WEIGHT * (1 - share)
        if self.wants_number and not has_number(sentence):
            fit *= 1 - _ASKED_FOR_WEIGHT
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

    A weighted mean of the embedding similarity of the sentence, that of its passage, and
    the coverage of the question's focus words (rare ones count more), scaled by the share
    of named things it mentions (a question about GaLore is not answered by a sentence
    about another method) and by whether it states what is asked for. A question that
    only names something ("What is GaLore?") is answered by any sentence about it."""

    def __init__(
        self,
        embedder: Embedder,
        similarity_weight: float = 0.2,
        passage_weight: float = 0.5,
    ) -> None:
        self.embedder = embedder
        self.similarity_weight = similarity_weight
        self.passage_weight = passage_weight

    def score(
        self,
        question: str,
        sentences: list[str],
        contexts: list[str] | None = None,
        passages: list[str] | None = None,
    ) -> np.ndarray:
        """Relevance of each sentence; `contexts` (title, authors, venue of each sentence's
        paper) count for the focus words, not for the similarity; `passages` (the passage
        each sentence comes from) count for the similarity."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        contexts = contexts or [""] * len(sentences)
        found = [words(s) | words(c) for s, c in zip(sentences, contexts, strict=True)]
        paper = _paper_words(contexts, passages or sentences)
        focus = Focus.of(question).known_to(set().union(*paper.values()))
        names = np.array([focus.name_match(paper[c]) for c in contexts])
        weight = _rarity(focus.terms | focus.names, found)
        coverage = np.array([(focus.coverage(w, weight) + focus.coverage(paper[c], weight)) / 2 for w, c in zip(found, contexts)])
        fit = np.array([focus.answers_asked_for(s) for s in sentences])
        if focus.terms:
            sentence_sim, passage_sim = self._similarities(question, sentences, passages)
            coverage_weight = 1 - self.similarity_weight - self.passage_weight
            blended = (
                self.similarity_weight * sentence_sim
                + self.passage_weight * passage_sim
                + coverage_weight * coverage
            )
        else:
            blended = coverage
        return np.clip(blended, 0.0, 1.0) * names * fit

    def _similarities(
        self, question: str, sentences: list[str], passages: list[str] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Cosine similarity of the question to each sentence and to its passage (the
        sentence itself when passages are not given), clipped at 0. A question of several
        sentences counts as close to a sentence when its last one alone is."""
        probes = list(dict.fromkeys([question, _asked_part(question)]))
        unique = list(dict.fromkeys(passages or []))
        vectors = self.embedder.embed([*probes, *sentences, *unique])
        probed = len(probes)
        similarity = np.clip(vectors[probed:] @ vectors[:probed].T, 0.0, 1.0).max(axis=1)
        sentence_sim = similarity[: len(sentences)]
        if not passages:
            return sentence_sim, sentence_sim
        row = {text: len(sentences) + i for i, text in enumerate(unique)}
        return sentence_sim, similarity[[row[p] for p in passages]]
