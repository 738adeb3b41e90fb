"""Does a passage support a claim? A local, deterministic entailment scorer.

No natural-language-inference model can be had offline, so the verdict combines two kinds
of cheap evidence. Similarity: the best embedding cosine between the claim and the passage
as a whole, each of its sentences or, when those fall short, each of its clauses. And
detectors of the usual ways a fluent claim departs from its source: a number or a name the
passage does not have, a negation or an opposite word where the passage has the same
words around the plain one, and a comparison turned around. The score is logistic in the
cosine, fitted on the even-numbered rows of `eval/judge_pairs.jsonl`; any detector that
fires pushes it far below the threshold."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import NamedTuple

import numpy as np

from .embeddings import Embedder
from .text import sentence_spans


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


_STOPWORDS = _wordset(
    """a an and are as at be been being both but by can could did do does doing each either
    for from had has have having he her here hers him his how i if in into is it its itself
    just may might much must of on once or other our ours own same she should so such than
    that the their theirs them then there these they this those through thus to too until
    up very via was we were what when where which while who whom why will with would you
    your also hence therefore however moreover furthermore additionally specifically notably
    finally first firstly second secondly further well paper papers work study authors author
    approach show shows shown showing demonstrate demonstrates demonstrated find finds found
    propose proposes proposed present presents report reports reported introduce introduces
    make makes made"""
)
_NEGATIONS = _wordset(
    """not no never cannot can't don't doesn't isn't aren't won't wasn't weren't didn't
    without none neither nor unable lack lacks lacking"""
)
# Pairs of word groups of opposite meaning; an empty second group just joins synonyms.
_OPPOSITES = (
    (
        "more greater higher larger bigger increase increases increased increasing grow grows "
        "growing rise rises raise raises boost boosts many",
        "less fewer lower smaller decrease decreases decreased decreasing reduce reduces reduced "
        "reducing reduction shrink shrinks diminish diminishes diminishing decline declines few",
    ),
    ("maximum max maximal maximize maximizes", "minimum min minimal minimize minimizes"),
    (
        "better best outperform outperforms outperforming superior surpass surpasses beat beats "
        "improve improves improved improvement improvements benefit benefits beneficial help helps",
        "worse worst underperform underperforms underperforming inferior degrade degrades degraded "
        "degradation worsen worsens hurt hurts harm harms harmful detrimental",
    ),
    (
        "fast faster fastest quick quickly rapid rapidly accelerate accelerates",
        "slow slower slowly",
    ),
    ("strong stronger strongest good", "weak weaker weakest poor poorer bad"),
    (
        "easy easier easily efficient efficiently tractable feasible possible",
        "hard harder difficult difficulty intractable infeasible impossible inefficient hardness",
    ),
    ("large big huge long wide", "small tiny short narrow"),
    ("high", "low"),
    ("success succeed succeeds successful successfully", "fail fails failure failed"),
    (
        "enable enables allow allows promote promotes enforce enforces encourage encourages "
        "induce induces ensure ensures",
        "prevent prevents prevented prohibit prohibits preclude precludes discourage discourages "
        "hinder hinders inhibit inhibits",
    ),
    ("persist persists remain remains continue continues", "disappear disappears vanish vanishes"),
    (
        "support supports favor favors favour favours confirm confirms",
        "against oppose opposes contradict contradicts refute refutes",
    ),
    (
        "significant significantly substantial substantially considerable considerably drastic "
        "drastically dramatic dramatically",
        "negligible marginal marginally slight slightly minor insignificant",
    ),
    ("always", "never sometimes rarely occasionally"),
    ("homogeneous", "heterogeneous"),
    ("balanced", "imbalanced"),
    ("single", "multiple"),
    ("dense", "sparse"),
    ("explicit explicitly", "implicit implicitly"),
    ("global", "local"),
    ("positive", "negative"),
    ("early earlier", "late later"),
    ("before", "after"),
    ("accept accepts", "reject rejects"),
    ("include includes", "exclude excludes"),
    ("same identical similar equal", "different distinct dissimilar"),
    ("true", "false"),
    ("cheap cheaper inexpensive", "expensive costlier"),
    ("stable robust", "unstable fragile"),
    (
        "linked related associated correlated correlates connected",
        "unrelated uncorrelated independent disconnected",
    ),
    ("widely extensively", "overlooked rarely understudied unexplored neglected"),
    ("online", "offline"),
    ("require requires required need needs rely relies depend depends", ""),
    ("feedforward", "recurrent"),
    ("deterministic", "stochastic random randomized"),
    ("discrete", "continuous"),
    ("static", "dynamic"),
    ("shallow", "deep"),
    ("exact exactly", "approximate approximately"),
    ("synthetic", "real"),
    ("supervised", "unsupervised self-supervised"),
)
_NUMBER_WORDS = {
    "two": "2", "twin": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "fifteen": "15", "nineteen": "19", "twenty": "20", "hundred": "100",
    "thousand": "1000", "half": "50",
}  # fmt: skip
_NEGATIVE_PREFIXES = ("un", "in", "ir", "non")
# Words that relate two things asymmetrically: "A outperforms B" is not "B outperforms A".
_RELATIONS = _wordset(
    """better worse outperform outperforms underperform underperforms exceed exceeds surpass
    surpasses beat beats dominate dominates superior inferior more less fewer higher lower
    larger smaller faster slower stronger weaker precede precedes replace replaces"""
)

_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*[A-Za-z0-9]|[A-Za-z0-9]|[,;:.()]")
_POSSESSIVE = re.compile(r"['’]s?$")
# A "+" glued to a number is kept: "d^{k+1}" must not match "d^{k-1}".
_NUMBER = re.compile(r"(?:(?<=\w)\+|(?<![A-Za-z.]))\d+(?:,\d{3})*(?:\.\d+)?")
# A quantity stands alone ("65.5%", "3x", "98 datasets"), unlike the digits of "CIFAR-10".
_QUANTITY = re.compile(r"(?<![\w.\-])\d+(?:,\d{3})*(?:\.\d+)?(?=\s*(?:%|x\b|×)|[^\w.\-]|$)")
_PUNCTUATION = frozenset(",;:.()")
_CLAUSE_BREAK = re.compile(r"(?<=[,;:])\s+|\s+(?=(?:while|whereas|which|but|although|though)\b)")


@dataclass(frozen=True)
class Support:
    """The verdict on one claim against one passage."""

    supported: bool
    score: float
    reason: str
    new_words: float = 1.0  # the share of the claim's content words the passage lacks


class _Term(NamedTuple):
    """A content word: its stem, whether a negation reaches it, and the word itself."""

    stem: str
    negated: bool
    word: str


@dataclass(frozen=True)
class _Text:
    """What the scorer compares about one text, worked out once per text."""

    terms: tuple[_Term, ...]
    stems: frozenset[str]
    numbers: tuple[str, ...]
    quantities: tuple[str, ...]
    names: tuple[tuple[int, str], ...]
    keys: frozenset[str]
    initials: str
    first_person: bool
    prefixed: tuple[tuple[str, str], ...]
    places: dict[str, tuple[int, ...]]
    contexts: tuple[dict[str, int], ...]


@cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Snowball stem, after mapping adverbs the stemmer leaves apart: 'simply' -> 'simple'."""
    if len(word) > 5 and word.endswith("ily"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith(("bly", "ply")):
        word = word[:-1] + "e"
    return _stemmer().stemWord(word)


@cache
def _opposites() -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """Stem -> (stems of the same meaning, stems of the opposite meaning)."""
    table: dict[str, tuple[set[str], set[str]]] = {}
    for first, second in _OPPOSITES:
        one, other = {_stem(w) for w in first.split()}, {_stem(w) for w in second.split()}
        for group, opposite in ((one, other), (other, one)):
            for member in group:
                same, against = table.setdefault(member, (set(), set()))
                same |= group
                against |= opposite
    return {key: (frozenset(same), frozenset(against)) for key, (same, against) in table.items()}


def _clean(text: str) -> str:
    """Text without LaTeX markup, with '×' spelled 'x'."""
    return re.sub(r"[{}$*_^\\]", " ", _LATEX_COMMAND.sub(" ", text)).replace("×", "x ")


def _tokens(cleaned: str) -> list[str]:
    """Words, numbers and punctuation marks, case kept, possessive endings dropped."""
    return [_POSSESSIVE.sub("", token) or token for token in _TOKEN.findall(cleaned)]


def _words(tokens: list[str]) -> list[str]:
    """Lower-cased words with hyphenated ones split and 'label-free' read as 'not label'."""
    words = []
    for token in tokens:
        lower = token.lower()
        if lower.endswith("-free") and len(lower) > 5:
            words += ["not", lower[:-5].replace("-", "")]
        else:
            words += [part for part in lower.split("-") if part]
    return words


def _terms(words: list[str]) -> tuple[_Term, ...]:
    """Content words in order; a negation reaches the next one unless punctuation intervenes."""
    terms = []
    negating = False
    index = 0
    while index < len(words):
        word = words[index]
        following = words[index + 1] if index + 1 < len(words) else ""
        index += 1
        if word == "not" and following in ("only", "just", "merely"):
            index += 1
        elif word in _NEGATIONS or word.endswith("n't"):
            negating = True
            index += word == "no" and following == "longer"
        elif word.startswith("fail") and following == "to":
            negating = True
        elif word in _PUNCTUATION:
            negating = False
        elif word not in _STOPWORDS and not word.isdigit():
            terms.append(_Term(_stem(word), negating, word))
            # "not necessarily better": an adverb passes the negation on.
            negating = negating and word.endswith("ly")
    return tuple(terms)


def _number(raw: str) -> str:
    """'1,000' -> '1000', '65.50' -> '65.5'; a glued sign stays: '+1'."""
    value = float(raw.replace(",", ""))
    return f"{value:+g}" if raw.startswith("+") else f"{value:g}"


def _numbers(cleaned: str) -> tuple[str, ...]:
    """Every number in the text, digits or words, normalised ('1,000' -> '1000')."""
    digits = [_number(raw) for raw in _NUMBER.findall(cleaned)]
    spelled = [
        _NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", cleaned.lower()) if w in _NUMBER_WORDS
    ]
    return tuple(digits + spelled)


def _key(token: str) -> str:
    """How a name is looked up: 'CIFAR-10' -> 'cifar10', 'SSMs' -> 'ssm'."""
    key = re.sub(r"[^a-z0-9]", "", token.lower())
    return key[:-1] if len(key) > 3 and key.endswith("s") and not key.endswith("ss") else key


def _is_name(token: str, previous: str) -> bool:
    """Model, dataset and method names, acronyms and proper nouns: 'GaLore', 'CIFAR-10',
    'LLaMA', 'SSMs', mid-sentence 'Adam'."""
    if not token[:1].isalnum() or token.isdigit():
        return False
    if any(ch.isdigit() for ch in token) or any(ch.isupper() for ch in token[1:]):
        return True
    return token[0].isupper() and previous[:1].isalnum()


def _names(tokens: list[str]) -> tuple[tuple[int, str], ...]:
    """The names in `tokens`, with their positions."""
    return tuple(
        (position, token)
        for position, token in enumerate(tokens)
        if _is_name(token, tokens[position - 1] if position else "")
    )


def _keys(tokens: list[str]) -> frozenset[str]:
    """Every key under which a name counts as mentioned: each token and each part of a
    hyphenated token."""
    return frozenset(_key(part) for token in tokens for part in [token, *token.split("-")])


def _places(terms: tuple[_Term, ...]) -> dict[str, tuple[int, ...]]:
    places: dict[str, list[int]] = {}
    for index, term in enumerate(terms):
        places.setdefault(term.stem, []).append(index)
    return {stem: tuple(indices) for stem, indices in places.items()}


@lru_cache(maxsize=4096)
def _analyse(text: str) -> _Text:
    cleaned = _clean(text)
    tokens = _tokens(cleaned)
    words = _words(tokens)
    terms = _terms(words)
    return _Text(
        terms=terms,
        stems=frozenset(term.stem for term in terms),
        numbers=_numbers(cleaned),
        quantities=tuple(_number(raw) for raw in _QUANTITY.findall(cleaned)),
        names=_names(tokens),
        keys=_keys(tokens),
        initials="".join(word[0] for word in words if word[0].isalpha()),
        first_person=bool({"we", "our", "us"} & set(words)),
        prefixed=tuple((term.stem, base) for term in terms for base in _bases(term.word)),
        places=_places(terms),
        contexts=tuple(_context(terms, index) for index in range(len(terms))),
    )


def _number_problem(claim: _Text, passage: _Text) -> str | None:
    missing = Counter(claim.numbers) - Counter(passage.numbers)
    if missing:
        return f"number {next(iter(missing))} not in passage"
    places = [passage.quantities.index(q) for q in claim.quantities if q in passage.quantities]
    for before, after in itertools.pairwise(places):
        if before > after:
            return f"numbers {passage.quantities[after]} and {passage.quantities[before]} swapped"
    return None


def _name_problem(claim: _Text, passage: _Text) -> str | None:
    for position, name in claim.names:
        key = _key(name)
        # The passage may spell an acronym out: "stochastic gradient descent" for "SGD".
        if key in passage.keys or (len(key) > 1 and key.isalpha() and key in passage.initials):
            continue
        parts = [part for part in name.split("-") if part.isdigit() or _is_name(part, "x")]
        if "-" in name and parts and all(_key(part) in passage.keys for part in parts):
            continue
        # "GaLore cuts memory" cites "our approach reduces memory": the subject is the paper's own.
        if position <= 1 and passage.first_person:
            continue
        return f"name {name} not in passage"
    return None


def _bases(word: str) -> set[str]:
    """Stems `word` may negate by a prefix: 'unpreventable' -> {'prevent', ...}."""
    bases = set()
    for prefix in _NEGATIVE_PREFIXES:
        base = word[len(prefix) :]
        if word.startswith(prefix) and len(base) > 3:
            bases.add(_stem(base))
            if base.endswith("able"):
                bases |= {_stem(base[:-4]), _stem(base[:-4] + "e")}
    return bases


def _unprefixed(word: str, stems: frozenset[str]) -> str | None:
    """The stem in `stems` that `word` negates by a prefix, if any."""
    found = _bases(word) & stems
    return min(found) if found else None


def _polarities(terms: tuple[_Term, ...], other: frozenset[str]) -> dict[str, set[bool]]:
    """Stem -> the polarities it occurs with, prefix negations folded onto their base."""
    polarities: dict[str, set[bool]] = {}
    for term in terms:
        base = None if term.stem in other else _unprefixed(term.word, other)
        if base is None:
            polarities.setdefault(term.stem, set()).add(term.negated)
        else:
            polarities.setdefault(base, set()).add(not term.negated)
    return polarities


def _negation_problem(claim: _Text, passage: _Text) -> str | None:
    ours = _polarities(claim.terms, passage.stems)
    theirs = _polarities(passage.terms, claim.stems)
    for stem, signs in ours.items():
        if stem in theirs and not signs & theirs[stem]:
            word = next((term.word for term in claim.terms if term.stem == stem), stem)
            return f"negated on one side only: '{word}'"
    return None


def _opposite_problem(claim: _Text, passage: _Text) -> str | None:
    """A claim word whose opposite, more than itself, has the claim word's neighbours in the
    passage: 'higher expected error' against 'lower expected error', 'requires labels'
    against 'label-free'. A negation turns a word into its opposite, so 'not tractable'
    agrees with 'hard'."""
    for index, term in enumerate(claim.terms):
        same, opposite = _senses(term, passage)
        # "less strongly" means "weaker"; "offline and online" contrasts the two itself.
        if opposite & claim.stems or (index and claim.terms[index - 1].word == "less"):
            continue
        sense = -1 if term.negated else 1
        fits = {1: 0.0, -1: 0.0}
        for stem in same | opposite:
            for at in passage.places.get(stem, ()):
                side = sense * _sense(passage.terms[at], same, opposite)
                fits[side] = max(fits[side], _fit(claim.contexts[index], passage.contexts[at]))
        if fits[-1] > max(fits[1], 0.5):
            return f"'{term.word}' contradicts the passage"
    return None


def _senses(term: _Term, passage: _Text) -> tuple[frozenset[str], frozenset[str]]:
    """Stems meaning the same as `term` and stems meaning its opposite, including words
    that differ from it by a negative prefix ('balanced', 'unbalanced')."""
    same, opposite = _opposites().get(term.stem, (frozenset({term.stem}), frozenset()))
    prefixed = {stem for stem, base in passage.prefixed if base == term.stem}
    base = _unprefixed(term.word, passage.stems)
    return same, opposite | prefixed | ({base} if base else set())


def _sense(term: _Term, same: frozenset[str], opposite: frozenset[str]) -> int:
    """1 if `term` says the same, -1 if it says the opposite (a negation flips), else 0."""
    found = 1 if term.stem in same else -1 if term.stem in opposite else 0
    return -found if term.negated else found


def _context(terms: tuple[_Term, ...], index: int, reach: int = 2) -> dict[str, int]:
    """The stems around `index`, with their offsets from it (negative: before)."""
    return {
        terms[at].stem: at - index
        for at in range(max(0, index - reach), min(len(terms), index + reach + 1))
        if at != index
    }


def _fit(ours: dict[str, int], theirs: dict[str, int]) -> float:
    """How well two contexts agree: a shared neighbour counts 1 at the same offset, half
    elsewhere on the same side."""
    return sum(
        1.0 if theirs[stem] == offset else 0.5
        for stem, offset in ours.items()
        if stem in theirs and (theirs[stem] > 0) == (offset > 0)
    )


def _reversal_problem(claim: _Text, passage: _Text, window: int = 4) -> str | None:
    """A comparison whose two sides appear swapped ('A outperforms B' for 'B outperforms A')."""
    relations = _relations()
    for index, term in enumerate(claim.terms):
        if term.stem not in relations:
            continue
        left, right = _sides(claim.terms, index, window)
        verdicts = [
            _crossing(left, right, *_sides(passage.terms, at, window))
            for at, other in enumerate(passage.terms)
            if other.stem == term.stem
        ]
        if verdicts and min(verdicts) > 0:
            return f"the two sides of '{term.word}' are swapped"
    return None


def _sides(terms: tuple[_Term, ...], index: int, window: int) -> tuple[set[str], set[str]]:
    """The words shortly before and shortly after `index`, without those found on both."""
    left = {term.stem for term in terms[max(0, index - window) : index]}
    right = {term.stem for term in terms[index + 1 : index + 1 + window]}
    return left - right, right - left


def _crossing(left: set[str], right: set[str], their_left: set[str], their_right: set[str]) -> int:
    """How much more the two sides match crosswise than straight (positive: swapped)."""
    if not (left & their_right and right & their_left):
        return 0
    crossed = len(left & their_right) + len(right & their_left)
    return crossed - len(left & their_left) - len(right & their_right)


@cache
def _relations() -> frozenset[str]:
    return frozenset(_stem(word) for word in _RELATIONS)


_CHECKS = (
    _number_problem,
    _name_problem,
    _negation_problem,
    _opposite_problem,
    _reversal_problem,
)
# The score is logistic in the cosine, with its midpoint and slope fitted on the even-numbered
# rows of eval/judge_pairs.jsonl; a contradiction found by any check overrides similarity.
_MIDPOINT = 0.682
_SLOPE = 10.5
_PENALTY = 6.0
_THRESHOLD = 0.5
# Clauses are looked at only when sentences give at least this cosine: no clause in the
# labelled pairs raised it by more than 0.3.
_FLOOR = _MIDPOINT - 0.35


@dataclass(frozen=True)
class _Evidence:
    """What one claim-passage pair shows, before it is weighed."""

    cosine: float
    problems: tuple[str, ...]
    unmatched: tuple[str, ...]
    terms: int

    @property
    def new_words(self) -> float:
        """The share of the claim's content words the passage lacks."""
        return len(self.unmatched) / max(self.terms, 1)

    def score(self) -> float:
        total = _SLOPE * (self.cosine - _MIDPOINT) - _PENALTY * bool(self.problems)
        return 1.0 / (1.0 + math.exp(-total))

    def reason(self, supported: bool) -> str:
        if self.problems:
            return self.problems[0]
        if supported:
            return f"paraphrase (cosine {self.cosine:.2f})"
        missing = f"; not in passage: {', '.join(self.unmatched[:3])}" if self.unmatched else ""
        return f"weak match (cosine {self.cosine:.2f}){missing}"


def _evidence(claim: str, passage: str, cosine: float) -> _Evidence:
    ours, theirs = _analyse(claim), _analyse(passage)
    problems = tuple(reason for check in _CHECKS if (reason := check(ours, theirs)))
    unmatched = tuple(
        dict.fromkeys(term.word for term in ours.terms if term.stem not in theirs.stems)
    )
    return _Evidence(cosine, problems, unmatched, len({term.word for term in ours.terms}))


def _has_words(text: str) -> bool:
    return any(char.isalnum() for char in text)


def _sentences(passage: str) -> list[str]:
    sentences = [passage[start:end] for start, end in sentence_spans(passage)]
    return [sentence for sentence in sentences if _has_words(sentence)]


def _clauses(sentences: list[str]) -> list[str]:
    """The clauses of sentences that have several: a short claim often restates one clause
    of a long sentence, and is then closer to the clause than to the sentence."""
    clauses = []
    for sentence in sentences:
        parts = [part for part in _CLAUSE_BREAK.split(sentence) if _has_words(part)]
        clauses += parts if len(parts) > 1 else []
    return clauses


def _cosine(claim: np.ndarray, units: np.ndarray) -> float:
    """The best cosine of the claim with one unit or with all of them together (the passage
    as a whole, taken as the normalised sum of its sentence vectors: embedding it too would
    double the cost for no measured gain)."""
    scores = units @ claim
    if len(units) > 1:
        whole = units.sum(axis=0)
        scores = np.append(scores, whole @ claim / max(float(np.linalg.norm(whole)), 1e-12))
    return float(scores.max())


class SupportScorer:
    """Judges whether a passage supports a claim, offline and deterministically.

    A claim counts as supported when its score reaches `threshold` (default 0.5, the
    midpoint of the fitted model)."""

    def __init__(self, embedder: Embedder | None = None, threshold: float | None = None) -> None:
        if embedder is None:
            from .embeddings import OnnxMiniLMEmbedder

            embedder = OnnxMiniLMEmbedder()
        self.embedder = embedder
        self.threshold = _THRESHOLD if threshold is None else threshold

    def check(self, claim: str, passage: str) -> Support:
        """The verdict on `claim` against `passage`."""
        return self.check_many([(claim, passage)])[0]

    def check_many(self, pairs: list[tuple[str, str]]) -> list[Support]:
        """The verdicts for many pairs. Every distinct claim and sentence is embedded once,
        in one call; a second call embeds the clauses of passages that a claim resembles
        without reaching the threshold sentence by sentence."""
        sentences = {passage: _sentences(passage) for _, passage in pairs}
        vectors: dict[str, np.ndarray] = {}
        claims = [claim for claim, _ in pairs if _has_words(claim)]
        self._embed(claims + [text for group in sentences.values() for text in group], vectors)
        verdicts = [
            self._verdict(claim, passage, sentences[passage], [], vectors)
            for claim, passage in pairs
        ]
        closer = [index for index, verdict in enumerate(verdicts) if _undecided(verdict)]
        clauses = {pairs[index][1]: _clauses(sentences[pairs[index][1]]) for index in closer}
        self._embed([text for group in clauses.values() for text in group], vectors)
        for index in closer:
            claim, passage = pairs[index]
            verdicts[index] = self._verdict(
                claim, passage, sentences[passage], clauses[passage], vectors
            )
        return [support for support, _ in verdicts]

    def _embed(self, texts: list[str], vectors: dict[str, np.ndarray]) -> None:
        """Adds the vectors of those `texts` not in `vectors` yet."""
        texts = [text for text in dict.fromkeys(texts) if text not in vectors]
        if texts:
            vectors.update(zip(texts, self.embedder.embed(texts), strict=True))

    def _verdict(
        self,
        claim: str,
        passage: str,
        sentences: list[str],
        clauses: list[str],
        vectors: dict[str, np.ndarray],
    ) -> tuple[Support, _Evidence | None]:
        if claim not in vectors:
            return Support(False, 0.0, "empty claim"), None
        if not sentences:
            return Support(False, 0.0, "empty passage"), None
        cosine = _cosine(vectors[claim], np.array([vectors[text] for text in sentences]))
        if clauses:
            cosine = max(cosine, max(float(vectors[claim] @ vectors[text]) for text in clauses))
        evidence = _evidence(claim, passage, cosine)
        score = evidence.score()
        supported = score >= self.threshold
        return Support(supported, score, evidence.reason(supported), evidence.new_words), evidence


def _undecided(verdict: tuple[Support, _Evidence | None]) -> bool:
    """Whether clauses could still turn a verdict reached on sentences into 'supported'."""
    support, evidence = verdict
    return (
        evidence is not None
        and not support.supported
        and not evidence.problems
        and evidence.cosine >= _FLOOR
    )
