"""Verify a generated answer sentence by sentence against the passages it cites.

Each sentence keeps only citations whose passage supports it; a sentence citing the wrong
passage is re-attached to the retrieved passage that does support it; a sentence that
nothing retrieved supports is removed and counted."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from .retrieval import Hit
from .support import SupportScorer
from .text import sentence_spans

_MARKER = re.compile(r"\[\s*(\d+(?:\s*(?:[,;]|-|–)\s*\d+)*)\s*\]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_REFUSAL = re.compile(
    r"(do(?:es)? not|don't|cannot|can't|unable to) (answer|address|provide|contain|mention)"
    r"|no (relevant )?information|not (mentioned|addressed|covered|stated)",
    re.IGNORECASE,
)
_LEADING_MARKERS = re.compile(r"^\s*(?:\[[^\]]*\]\s*)+")
_LABEL = re.compile(r"^\s*(answer|sources?|references?)\s*:\s*", re.IGNORECASE)
_MAX_CITED_NUMBER = 1000


@dataclass(frozen=True)
class Evidence:
    """The passage `hit` (0-based index into the sources) supports a sentence through the
    abstract span `start:end`."""

    hit: int
    start: int
    end: int
    score: float


@dataclass
class GroundedSentence:
    text: str
    evidence: list[Evidence]
    repaired: bool = False


@dataclass
class Grounding:
    """The verified sentences, and what was removed or repaired on the way."""

    sentences: list[GroundedSentence] = field(default_factory=list)
    dropped: int = 0
    repaired: int = 0
    invalid_citations: int = 0
    model_refused: bool = False


@dataclass(frozen=True)
class Claim:
    """A sentence of a generated answer and the 0-based sources it cites."""

    text: str
    cited: tuple[int, ...]

    def citing(self, more) -> Claim:
        return Claim(self.text, tuple(dict.fromkeys((*self.cited, *more))))


def parse_citations(text: str, n_sources: int) -> tuple[str, list[int], int]:
    """Strip `[n]`, `[n, m]`, `[n-m]` markers from `text`.

    Returns the clean text, the valid 1-based numbers in order of appearance, and how
    many numbers were out of range (1..n_sources)."""
    numbers: list[int] = []
    invalid = 0
    for match in _MARKER.finditer(text):
        for number in _expand(match.group(1)):
            if 1 <= number <= n_sources:
                if number not in numbers:
                    numbers.append(number)
            else:
                invalid += 1
    clean = _SPACE_BEFORE_PUNCT.sub(r"\1", _MARKER.sub(" ", text))
    return " ".join(clean.split()), numbers, invalid


def _expand(group: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", group):
        bounds = [int(x) for x in re.split(r"\s*[-–]\s*", part) if x]
        if len(bounds) == 2 and 0 < bounds[1] - bounds[0] < 20:
            numbers.extend(range(bounds[0], bounds[1] + 1))
        else:
            numbers.extend(b for b in bounds if b <= _MAX_CITED_NUMBER)
    return numbers


def split_claims(answer: str, n_sources: int) -> tuple[list[Claim], int, bool]:
    """Sentences of a generated answer with their cited source numbers (0-based).

    Markers that punkt puts at the start of the next sentence are given back to the
    sentence they close. Returns the claims, the count of out-of-range citations, and
    whether the model said the sources do not answer."""
    claims: list[Claim] = []
    invalid = 0
    refused = False
    for start, end in sentence_spans(answer):
        sentence = answer[start:end]
        leading = _LEADING_MARKERS.match(sentence)
        if leading and claims:
            _, numbers, bad = parse_citations(leading.group(0), n_sources)
            invalid += bad
            claims[-1] = claims[-1].citing(n - 1 for n in numbers)
            sentence = sentence[leading.end() :]
        text, numbers, bad = parse_citations(sentence, n_sources)
        invalid += bad
        text = _LABEL.sub("", text).strip()
        if not any(char.isalpha() for char in text):
            continue
        if _REFUSAL.search(text):
            refused = True
            continue
        if claims and claims[-1].text == text:
            continue
        claims.append(Claim(text, tuple(n - 1 for n in numbers)))
    return claims, invalid, refused


class _Unit(NamedTuple):
    """A stretch of a retrieved passage a claim is checked against."""

    hit: int
    start: int
    end: int
    text: str
    whole: bool = False


class Grounder:
    """Checks claims against retrieved passages with a `SupportScorer`.

    A claim is supported by a passage only if, besides the scorer's verdict, at most
    `max_new_words` of its content words are missing from it: a small model's fluent
    inventions are built from the source's own words and pass a similarity test."""

    def __init__(self, scorer: SupportScorer, max_new_words: float = 1.0) -> None:
        self.scorer = scorer
        self.max_new_words = max_new_words

    def ground(self, answer: str, hits: list[Hit], abstracts: dict[str, str]) -> Grounding:
        claims, invalid, refused = split_claims(answer, len(hits))
        result = Grounding(invalid_citations=invalid, model_refused=refused)
        units = _units(hits, abstracts)
        verdicts = self.scorer.check_many(
            [(claim.text, unit.text) for claim in claims for unit in units]
        )
        for position, claim in enumerate(claims):
            row = verdicts[position * len(units) : (position + 1) * len(units)]
            best = _best_per_hit(units, row, self.max_new_words)
            sentence = _decide(claim, best)
            if sentence is None:
                result.dropped += 1
            else:
                result.repaired += sentence.repaired
                result.sentences.append(sentence)
        return result


def _units(hits: list[Hit], abstracts: dict[str, str]) -> list[_Unit]:
    """Each sentence of each passage, then each passage of several sentences as a whole."""
    units = []
    for index, hit in enumerate(hits):
        abstract = abstracts.get(hit.paper_id)
        spans = hit.sentences if abstract else []
        units += [_Unit(index, start, end, abstract[start:end]) for start, end in spans]
        if len(spans) != 1:
            units.append(_Unit(index, hit.start, hit.end, hit.text, whole=True))
    return units


def _best_per_hit(units: list[_Unit], verdicts, max_new_words: float) -> dict[int, Evidence]:
    """For each passage, its best supporting sentence, or the passage as a whole when no
    single sentence supports the claim (the snippet shown is then the whole passage)."""
    best: dict[int, tuple[tuple[bool, float], Evidence]] = {}
    for unit, verdict in zip(units, verdicts, strict=True):
        if not verdict.supported or verdict.new_words > max_new_words:
            continue
        rank = (not unit.whole, verdict.score)
        if unit.hit not in best or rank > best[unit.hit][0]:
            best[unit.hit] = (rank, Evidence(unit.hit, unit.start, unit.end, verdict.score))
    return {hit: evidence for hit, (_, evidence) in best.items()}


def _decide(claim: Claim, supported: dict[int, Evidence]) -> GroundedSentence | None:
    kept = [supported[i] for i in claim.cited if i in supported]
    if kept:
        return GroundedSentence(claim.text, kept)
    if not supported:
        return None
    strongest = max(supported.values(), key=lambda evidence: evidence.score)
    return GroundedSentence(claim.text, [strongest], repaired=True)
