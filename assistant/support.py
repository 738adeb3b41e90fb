"""Is a claim supported by a passage? A small, offline, deterministic entailment scorer."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from .embeddings import Embedder
from .text import sentence_spans

_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*[A-Za-z0-9]|[A-Za-z0-9]")
_NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:,\d{3})*(?:\.\d+)?")
_NUMBER_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "fifteen": "15", "twenty": "20", "hundred": "100", "thousand": "1000",
    "nineteen": "19", "half": "50", "twice": "2", "double": "2", "triple": "3",
}  # fmt: skip
_STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has
    have having he her here hers him his how i if in into is it its itself just may might
    more most much must of on once only or other our ours over own same she should so some
    such than that the their theirs them then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your also both each either via thus therefore hence further furthermore
    moreover however additionally specifically notably finally first firstly second
    secondly authors author paper work study approach show shows shown showing
    demonstrate demonstrates demonstrated find finds found propose proposes proposed
    present presents report reports reported introduce introduces well""".split()
)
_NEGATIONS = frozenset(
    """not no never cannot can't don't doesn't isn't aren't won't wasn't weren't without
    none neither nor fail fails failed failing unable lack lacks lacking""".split()
)
_ANTONYM_GROUPS = (
    ("more", "greater", "higher", "larger", "increase", "increases", "increased", "grows"),
    ("less", "fewer", "lower", "smaller", "decrease", "decreases", "decreased", "reduce",
     "reduces", "reduced", "diminishing", "shrinks"),
)  # fmt: skip
_ANTONYM_PAIRS = (
    ("better", "worse"), ("outperform", "underperform"), ("outperforms", "underperforms"),
    ("improve", "worsen"), ("improves", "worsens"), ("improve", "hurt"), ("improves", "hurts"),
    ("faster", "slower"), ("fast", "slow"), ("strong", "weak"), ("stronger", "weaker"),
    ("strong", "poor"), ("easy", "hard"), ("efficient", "hard"), ("large", "small"),
    ("high", "low"), ("maximum", "minimum"), ("upper", "lower"), ("heterogeneous",
    "homogeneous"), ("support", "against"), ("persist", "disappear"), ("persists",
    "disappears"), ("succeeds", "fail"), ("success", "failure"), ("positive", "negative"),
    ("significant", "negligible"), ("always", "sometimes"), ("all", "some"),
    ("enforces", "prevents"), ("promotes", "prevents"), ("requires", "free"),
    ("with", "without"), ("linked", "unrelated"), ("before", "after"),
)  # fmt: skip
_NEGATIVE_PREFIXES = ("un", "in", "im", "non", "ir", "dis")


@dataclass(frozen=True)
class Support:
    """The verdict on one claim against one passage."""

    supported: bool
    score: float
    reason: str


@cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def _stem(word: str) -> str:
    return _stemmer().stemWord(word)


@dataclass(frozen=True)
class _Analysis:
    """The lexical facts about one text that the scorer compares."""

    words: tuple[str, ...]
    content: tuple[str, ...]
    stems: frozenset[str]
    numbers: frozenset[str]
    entities: frozenset[str]
    negations: int


def _clean(text: str) -> str:
    text = _LATEX_COMMAND.sub(" ", text)
    return re.sub(r"[{}$*_^\\]", " ", text).replace("×", "x ")


def _numbers(text: str) -> frozenset[str]:
    found = {_normalise_number(match) for match in _NUMBER.findall(text)}
    found |= {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMBER_WORDS}
    return frozenset(found)


def _normalise_number(raw: str) -> str:
    value = float(raw.replace(",", ""))
    return f"{value:g}"


def _is_entity(token: str, position: int) -> bool:
    """Names, acronyms and model or dataset ids: 'GaLore', 'CIFAR-10', 'SSMs', 'Adam'."""
    if any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token):
        return True
    if any(ch.isupper() for ch in token[1:]):
        return True
    return position > 0 and token[0].isupper()


def _entity_key(token: str) -> str:
    key = token.lower().replace("-", "")
    return key[:-1] if key.endswith("s") and len(key) > 2 else key


@cache
def _analyse(text: str) -> _Analysis:
    cleaned = _clean(text)
    tokens = _TOKEN.findall(cleaned)
    words = tuple(token.lower() for token in tokens)
    content = tuple(w for w in words if w not in _STOPWORDS and not w.isdigit())
    entities = {_entity_key(t) for i, t in enumerate(tokens) if _is_entity(t, i)}
    return _Analysis(
        words=words,
        content=content,
        stems=frozenset(_stem(w) for w in content),
        numbers=_numbers(cleaned),
        entities=frozenset(entities),
        negations=sum(w in _NEGATIONS or w.endswith("n't") for w in words),
    )
