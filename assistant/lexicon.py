"""Words, the one place that says what they are: stems, stopwords, names, numbers, negations.

Keyword search, question analysis, relevance and support checks all read text through
these functions, so a word counts the same way everywhere."""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache, lru_cache
from itertools import pairwise
from pathlib import Path

# The embedding model's WordPiece tokenizer; its whole-word entries are everyday English.
MINILM_TOKENIZER_FILE = Path(__file__).parent / "resources" / "minilm_tokenizer.json"


def word_set(listing: str) -> frozenset[str]:
    """The whitespace-separated words of `listing`."""
    return frozenset(listing.split())


# Function words, plus the words abstracts use to talk about themselves ("we propose a
# method"): neither says what a paper is about.
STOPWORDS = word_set(
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
# Words a question asks with, which say nothing about what is asked for.
QUESTION_WORDS = word_set(
    """what which who whom whose when where why how does do did is are was were can could
    would should will much many paper papers study studies work works propose proposes
    proposed method methods approach approaches use uses used tell me about describe explain
    give show shows find finds any some here indexed compared compare between there has have
    had having get gets got make makes made from its itself them they their one ones up so
    per also just really only very more most than other e g i ie eg s report reports reported
    say says said according whether you your we our us introduce introduces introduced new
    novel now before collection summarize summarise summary overview list each contribute
    contributes contribution contributions do"""
)
# Words a paraphrase adds around the same content: reporting verbs, hedges, connectives and
# vague nouns. A claim may use them although its evidence does not.
FRAME_WORDS = word_set(
    """reportedly apparently notably especially essentially roughly approximately about around
    nearly almost overall instead rather whereas though although even since because thus
    therefore hence consequently accordingly meanwhile moreover also another other others
    every one ones respectively together either describe described describes call calls
    called argue argues argued claim claims note notes observe observes observed reveal
    reveals revealed state states suggest suggests indicate indicates offer offers provide
    provides use uses using used employ employs leverage leverages rely relies build builds
    built obtain obtains achieve achieves yield yields give gives keep keeps hold holds
    working combine combined combines target targets address addresses tackle tackles handle
    handles examine examines analyze analyzes analyse analyses investigate investigates
    explore explores consider considers focus focuses develop develops design designs aim
    aims way ways thing things kind kinds case cases setting settings result results finding
    findings experiment experiments empirically experimentally theoretically main key
    particular various several typically usually often generally mainly largely mostly
    instance example such like unlike allow allows enable enables help helps still yet
    already simply merely indeed actually really fact thereby namely respectively across
    et al whose quite"""
)
NEGATIONS = word_set(
    """not no never cannot can't don't doesn't isn't aren't won't wasn't weren't didn't
    without none neither nor unable lack lacks lacking"""
)
NUMBER_WORDS = {
    "two": "2", "twin": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
    "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "hundred": "100", "hundreds": "100", "thousand": "1000",
    "thousands": "1000", "half": "50", "twice": "2", "double": "2", "triple": "3",
}  # fmt: skip

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-]*")
_ACRONYM_PLURAL = re.compile(r"^([A-Z][A-Z0-9\-]*[A-Z0-9])s$")
# A quantity stands alone ("65.5%", "3x", "98 datasets"), unlike the digits of "CIFAR-10".
_QUANTITY = re.compile(
    r"(?<![A-Za-z\-])\d+(?:[.,]\d+)*(?:%|x|×|dB|[KMB]|GB)?(?![A-Za-z])"
    r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
    r"fifty|hundreds?|thousands?|millions?|billions?|twice|half|dozens?|single|"
    # how a cost grows is how many / how fast: "a logarithmic number of iterations"
    r"(?:logarithmic|exponential|polynomial|quadratic|sublinear|superlinear)(?:ly)?)\b",
    re.IGNORECASE,
)


@cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


_BRITISH = re.compile(r"^(\w{3,})is(e|es|ed|ing|ation|ations|er|ers)$")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball stem of a lower-case word, after mapping British spellings and adverbs the
    stemmer leaves apart: 'maximises' -> 'maximize', 'simply' -> 'simple', 'easily' -> 'easy'."""
    word = _BRITISH.sub(r"\1iz\2", word)
    if len(word) > 5 and word.endswith("ily"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith(("bly", "ply")):
        word = word[:-1] + "e"
    return _stemmer().stemWord(word)


def stems(words: list[str]) -> list[str]:
    """`stem` of each word."""
    return [stem(word) for word in words]


def normal(word: str) -> str:
    """Lower case, with an acronym's plural folded into it: 'LLMs' -> 'llm'."""
    plural = _ACRONYM_PLURAL.match(word)
    return (plural.group(1) if plural else word).lower()


def tokens(text: str) -> list[str]:
    """The words of `text` as written (letters, digits, inner hyphens and plus signs)."""
    return _WORD.findall(text)


@lru_cache(maxsize=65536)
def _content_stems(text: str, ignore: frozenset[str]) -> frozenset[str]:
    words = [w for w in tokens(text) if w.lower() not in ignore]
    parts = [part for w in words if "-" in w for part in w.split("-") if part]
    return frozenset(stem(normal(word)) for word in words + parts)


def content_stems(text: str, ignore: frozenset[str] = STOPWORDS) -> set[str]:
    """Stems of the content words of `text`; a hyphenated word also counts as its parts, so
    the name ERM is found in NI-ERM."""
    return set(_content_stems(text, ignore))


_FIGURE_WITH_UNIT = re.compile(r"\d+(?:\.\d+)?(?:-[a-z]+)+")


def looks_like_name(word: str) -> bool:
    """Method, model and dataset names: capitals after the first letter, or letters and
    digits together (GaLore, XRM, LLaMA-7B, Set5; not 2024, nor a figure with its unit:
    4-bit, 2-layer)."""
    if word.isdigit() or not word[:1].isalnum() or _FIGURE_WITH_UNIT.fullmatch(word):
        return False
    return any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word)


# "LoRA-style", "ELBO-based": the name before the hyphen is what such a word names.
_MODIFIER_SUFFIXES = word_set("style like based inspired enhanced free generated driven aware type")
_LEADING_FIGURE = re.compile(r"^\d+(?:\.\d+)?")
# What may follow a name in another spelling of it: a version number, or nothing.
_DIGITS_OR_END = frozenset("0123456789") | {""}


def _squash(word: str) -> str:
    return re.sub(r"[^a-z0-9]", "", word.lower())


class Mentions:
    """What a text mentions, allowing for the ways a name is written differently: 'sign-SGD'
    is 'sign SGD', 'LLM' is 'large language model', 'LoRA-style' is 'LoRA', 'dB' is in
    '4.52dB', and 'Vandermeulen-Tai-Aragam' is three names the text has."""

    def __init__(self, text: str) -> None:
        words = tokens(text)
        self.stems = content_stems(text)
        self.squashed = {_squash(_LEADING_FIGURE.sub("", w)) for w in words}
        self.squashed |= {_squash(a + b) for a, b in pairwise(words)}
        self.initials = {
            "".join(w[0] for w in words[i : i + n]).lower()
            for n in (2, 3, 4, 5)
            for i in range(len(words) - n + 1)
        }

    def of(self, name: str) -> bool:
        """Whether the text mentions `name`, a word as the question writes it."""
        plain = normal(name)
        if stem(plain) in self.stems or _squash(plain) in self.squashed:
            return True
        head, _, suffix = name.rpartition("-")
        if head and suffix.lower() in _MODIFIER_SUFFIXES:
            return self.of(head)
        if plain.isalpha() and plain.upper() == name.rstrip("s"):  # an acronym: LLM, GPs
            return 2 <= len(plain) <= 5 and plain in self.initials
        parts = [part for part in name.lower().split("-") if part not in STOPWORDS]
        return len(parts) > 1 and all(
            part.isalpha() and len(part) > 1 and stem(part) in self.stems for part in parts
        )


def names(text: str, min_letters: int = 1) -> set[str]:
    """The names in `text` as written, with at least `min_letters` letters (two leave out
    symbols such as l2 and v2)."""
    return {
        word
        for word in tokens(text)
        if looks_like_name(word) and sum(c.isalpha() for c in word) >= min_letters
    }


def name_stems(text: str, min_letters: int = 1) -> set[str]:
    """Stems of `names`."""
    return {stem(normal(word)) for word in names(text, min_letters)}


def name_spellings(text: str) -> dict[str, str]:
    """The names of `text` (`names`) of three characters or more, squashed
    ('tinyimagenet'), with their stems."""
    return {
        squashed: stem(normal(word)) for word in names(text) if len(squashed := _squash(word)) >= 3
    }


def names_spelled_in(spellings: dict[str, str], text: str) -> set[str]:
    """The stems of the names in `spellings` that `text` writes otherwise or in a numbered
    version: 'Tiny-ImageNet' as 'TinyImagenet', 'CIFAR' in 'CIFAR10/100', 'LLaMA' in
    'LLaMA-7B' (not 'ViT' in 'vital')."""
    if not spellings:
        return set()
    written = {_squash(word) for word in tokens(text)}
    return {
        name_stem
        for squashed, name_stem in spellings.items()
        if any(
            w.startswith(squashed) and w[len(squashed) : len(squashed) + 1] in _DIGITS_OR_END
            for w in written
        )
    }


def content_stems_with_names(text: str, spellings: dict[str, str]) -> set[str]:
    """`content_stems` of `text`, with the names of `spellings` it writes otherwise."""
    return content_stems(text) | names_spelled_in(spellings, text)


def has_quantity(text: str) -> bool:
    """Whether `text` states a quantity (a figure or a number word, not a digit in a name)."""
    return bool(_QUANTITY.search(text))


def quantities(text: str) -> set[str]:
    """The quantities `text` states, lower case: {'90%', 'two'}."""
    return {found.lower() for found in _QUANTITY.findall(text)}


def fold(text: str) -> str:
    """Lower case without diacritics: 'Thiébaut' -> 'thiebaut'."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


@cache
def common_words() -> frozenset[str]:
    """Everyday English words: the whole words of the embedding model's WordPiece
    vocabulary (about 20,000 of the most frequent). A question may use one in its own
    wording ("later", "keep") without naming a topic, unlike "watermarking"."""
    vocabulary = json.loads(MINILM_TOKENIZER_FILE.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(word for word in vocabulary if word.isalpha())
