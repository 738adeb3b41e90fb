"""Verify a generated answer sentence by sentence against the passages it cites.

Each sentence keeps only citations whose passage supports it; a sentence citing the wrong
passage is re-attached to the retrieved passage that does support it; a sentence that
nothing retrieved supports is removed and counted."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


class Grounder:
    """Checks claims against retrieved passages with a `SupportScorer`."""

    def __init__(self, scorer: SupportScorer) -> None:
        self.scorer = scorer

    def ground(self, answer: str, hits: list[Hit], abstracts: dict[str, str]) -> Grounding:
        claims, invalid, refused = split_claims(answer, len(hits))
        result = Grounding(invalid_citations=invalid, model_refused=refused)
        units = _units(hits, abstracts)
        verdicts = self.scorer.check_many(
            [(claim.text, text) for claim in claims for _, _, _, text in units]
        )
        for position, claim in enumerate(claims):
            row = verdicts[position * len(units) : (position + 1) * len(units)]
            best = _best_per_hit(units, row)
            sentence = _decide(claim, best)
            if sentence is None:
                result.dropped += 1
            else:
                result.repaired += sentence.repaired
                result.sentences.append(sentence)
        return result


def _units(hits: list[Hit], abstracts: dict[str, str]) -> list[tuple[int, int, int, str]]:
    """(hit, start, end, text) for each sentence of each passage, and each whole passage."""
    units = []
    for index, hit in enumerate(hits):
        abstract = abstracts.get(hit.paper_id)
        spans = hit.sentences if abstract else []
        for start, end in spans:
            units.append((index, start, end, abstract[start:end]))
        if len(spans) != 1:
            units.append((index, hit.start, hit.end, hit.text))
    return units


def _best_per_hit(units, verdicts) -> dict[int, Evidence]:
    """For each passage, its best supporting unit (sentence preferred over whole passage)."""
    best: dict[int, Evidence] = {}
    for (index, start, end, _), verdict in zip(units, verdicts, strict=True):
        if not verdict.supported:
            continue
        current = best.get(index)
        if current is None or verdict.score > current.score:
            best[index] = Evidence(index, start, end, verdict.score)
    return best


def _decide(claim: Claim, supported: dict[int, Evidence]) -> GroundedSentence | None:
    kept = [supported[i] for i in claim.cited if i in supported]
    if kept:
        return GroundedSentence(claim.text, kept)
    if not supported:
        return None
    strongest = max(supported.values(), key=lambda evidence: evidence.score)
    return GroundedSentence(claim.text, [strongest], repaired=True)
