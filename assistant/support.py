"""Does a passage support a claim? A local, deterministic entailment scorer.

No natural-language-inference model can be had offline, so the verdict combines cheap
signals: sentence-embedding similarity (to the whole passage and to each of its sentences),
how much of the claim's wording the passage covers, and detectors of the usual ways a
fluent claim contradicts its source: a changed number, a name the passage never mentions,
a flipped negation, an antonym, and a comparison turned around. A logistic model fitted on
the even-numbered rows of `eval/judge_pairs.jsonl` weighs them into a score in [0, 1]."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import NamedTuple

import numpy as np

from .embeddings import Embedder
from .text import sentence_spans

_STOPWORDS = frozenset(
    """a an and are as at be been being both but by can could did do does doing each either
    for from had has have having he her here hers him his how i if in into is it its itself
    just may might much must of on once or other our ours own same she should so such than
    that the their theirs them then there these they this those through thus to too until
    up very via was we were what when where which while who whom why will with would you
    your also hence therefore however moreover furthermore additionally specifically notably
    finally first firstly second secondly further well paper papers work study authors author
    approach show shows shown showing demonstrate demonstrates demonstrated find finds found
    propose proposes proposed present presents report reports reported introduce introduces
    make makes made""".split()
)
_NEGATIONS = frozenset(
    """not no never cannot can't don't doesn't isn't aren't won't wasn't weren't didn't
    without none neither nor unable lack lacks lacking""".split()
)
# Words after which a negation stops reaching forward.
_BOUNDARIES = frozenset(
    """but while which that where whereas although though because since under in for to by
    with when if as than even at from""".split()
)
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
    ("fast faster fastest quick quickly rapid rapidly accelerate accelerates", "slow slower slowly"),
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
_RELATIONS = """better worse outperform outperforms underperform underperforms exceed exceeds surpass
surpasses beat beats dominate dominates superior inferior more less fewer higher lower larger
smaller faster slower stronger weaker precede precedes replace replaces"""

_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*[A-Za-z0-9]|[A-Za-z0-9]|[,;:.()]")
_POSSESSIVE = re.compile(r"['’]s?$")
# A "+" glued to a number is kept: "d^{k+1}" must not match "d^{k-1}".
_NUMBER = re.compile(r"(?:(?<=\w)\+|(?<![A-Za-z.]))\d+(?:,\d{3})*(?:\.\d+)?")
# A quantity stands alone ("65.5%", "3x", "98 datasets"), unlike the digits of "CIFAR-10".
_QUANTITY = re.compile(r"(?<![\w.\-])\d+(?:,\d{3})*(?:\.\d+)?(?=\s*(?:%|x\b|×)|[^\w.\-]|$)")
_PUNCTUATION = frozenset(",;:.()")


@dataclass(frozen=True)
class Support:
    """The verdict on one claim against one passage."""

    supported: bool
    score: float
    reason: str


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
    first_person: bool
    prefixed: tuple[tuple[str, str], ...]


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
    spelled = [_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", cleaned.lower()) if w in _NUMBER_WORDS]
    return tuple(digits + spelled)


def _key(token: str) -> str:
    """How a name is looked up: 'CIFAR-10' -> 'cifar10', 'SSMs' -> 'ssm'."""
    key = re.sub(r"[^a-z0-9]", "", token.lower())
    return key[:-1] if len(key) > 3 and key.endswith("s") and not key.endswith("ss") else key


def _is_name(token: str, previous: str) -> bool:
    """Model, dataset and method names, acronyms and proper nouns: 'GaLore', 'CIFAR-10',
    'LLaMA', 'SSMs', mid-sentence 'Adam'."""
    if not token[0].isalnum() or token.isdigit():
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


def _keys(tokens: list[str], words: list[str]) -> frozenset[str]:
    """Every key under which a name counts as mentioned: each token, each part of a
    hyphenated token, and the initials of runs of words (an acronym the text spells out)."""
    keys = {_key(token) for token in tokens}
    keys |= {_key(part) for token in tokens for part in token.split("-")}
    letters = [word for word in words if word[0].isalpha()]
    for start in range(len(letters)):
        for length in range(2, 7):
            if start + length <= len(letters):
                keys.add("".join(word[0] for word in letters[start : start + length]))
    return frozenset(keys)


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
        keys=_keys(tokens, words),
        first_person=bool({"we", "our", "us"} & set(words)),
        prefixed=tuple((term.stem, base) for term in terms for base in _bases(term.word)),
    )


def _number_problem(claim: _Text, passage: _Text) -> str | None:
    missing = Counter(claim.numbers) - Counter(passage.numbers)
    if missing:
        return f"number {next(iter(missing))} not in passage"
    places = [passage.quantities.index(q) for q in claim.quantities if q in passage.quantities]
    for before, after in zip(places, places[1:]):
        if before > after:
            return (
                f"numbers {passage.quantities[after]} and {passage.quantities[before]} swapped"
            )
    return None


def _name_problem(claim: _Text, passage: _Text) -> str | None:
    for position, name in claim.names:
        if _key(name) in passage.keys:
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
            return f"negation differs on '{stem}'"
    return None


def _antonym_problem(claim: _Text, passage: _Text, reach: int = 2) -> str | None:
    """A claim word whose opposite, more than itself, has the claim word's neighbours in the
    passage ('higher expected error' against 'lower expected error'); a negation turns a
    word into its opposite ('not tractable' agrees with 'hard')."""
    for index, term in enumerate(claim.terms):
        same, opposite = _senses(term, passage)
        # "less strongly" means "weaker"; "offline and online" contrasts the two itself.
        if opposite & claim.stems:
            continue
        if index and claim.terms[index - 1].word == "less":
            continue
        context = _context(claim.terms, index, reach)
        sense = -1 if term.negated else 1
        agree, disagree = (
            max(
                (
                    _fit(context, _context(passage.terms, at, reach))
                    for at, other in enumerate(passage.terms)
                    if _sense(other, same, opposite) == side * sense
                ),
                default=0.0,
            )
            for side in (1, -1)
        )
        if disagree > max(agree, 0.5):
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


def _context(terms: tuple[_Term, ...], index: int, reach: int) -> dict[str, int]:
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
    """Stems of words that relate two things asymmetrically."""
    return frozenset(_stem(word) for word in _RELATIONS.split())


_CHECKS = (
    _number_problem,
    _name_problem,
    _negation_problem,
    _antonym_problem,
    _reversal_problem,
)
# The score is logistic in the cosine, with its midpoint and slope fitted on the even-numbered
# rows of eval/judge_pairs.jsonl; a contradiction found by any check overrides similarity.
_MIDPOINT = 0.674
_SLOPE = 10.9
_PENALTY = 6.0
_THRESHOLD = 0.5


@dataclass(frozen=True)
class _Evidence:
    """What one claim-passage pair shows, before it is weighed."""

    cosine: float
    problems: tuple[str, ...]
    unmatched: tuple[str, ...]

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
    return _Evidence(cosine, problems, unmatched)


def _has_words(text: str) -> bool:
    return any(char.isalnum() for char in text)


def _sentences(passage: str) -> list[str]:
    sentences = [passage[start:end] for start, end in sentence_spans(passage)]
    return [sentence for sentence in sentences if _has_words(sentence)]


def _cosine(claim: np.ndarray, sentences: np.ndarray) -> float:
    """The best cosine of the claim with one sentence or with the whole passage, whose vector
    is taken as the normalised sum of its sentence vectors (embedding it too would double the
    cost for no measured gain)."""
    scores = sentences @ claim
    if len(sentences) > 1:
        whole = sentences.sum(axis=0)
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
        """The verdicts for many pairs, every distinct claim and sentence embedded once, in
        one call."""
        sentences = {passage: _sentences(passage) for _, passage in pairs}
        texts = [claim for claim, _ in pairs if _has_words(claim)]
        texts += [sentence for group in sentences.values() for sentence in group]
        texts = list(dict.fromkeys(texts))
        vectors = dict(zip(texts, self.embedder.embed(texts), strict=True)) if texts else {}
        return [
            self._verdict(claim, passage, sentences[passage], vectors) for claim, passage in pairs
        ]

    def _verdict(
        self, claim: str, passage: str, sentences: list[str], vectors: dict[str, np.ndarray]
    ) -> Support:
        if claim not in vectors:
            return Support(False, 0.0, "empty claim")
        if not sentences:
            return Support(False, 0.0, "empty passage")
        cosine = _cosine(vectors[claim], np.array([vectors[s] for s in sentences]))
        evidence = _evidence(claim, passage, cosine)
        score = evidence.score()
        supported = score >= self.threshold
        return Support(supported, score, evidence.reason(supported))
