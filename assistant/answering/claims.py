"""Sentences with their support: the one type every answering stage passes on (`Claim`),
and the reading of a generated answer into sentences that cite numbered sources.

Reading follows how strong models write: `[n]`, `[n, m]` and `[n-m]` markers, markers put
after the full stop, a short opener ("Yes.", "Two papers do.") that only makes sense with
the claim after it, and sentences that refer back ("It ...", "This method ...", "The
authors ...") to what the previous sentence was about."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from ..lexicon import NUMBER_WORDS, looks_like_name, tokens
from ..text import sentence_spans

SentenceKind = Literal["claim", "opener", "framing"]
"""A `claim` states something from the papers and is verified against the evidence it
cites; an `opener` ("Yes.", "No.") is verified with the claim it opens and cites that
claim's evidence; `framing` is text that is true by construction (counted from the
citations, e.g. "Two papers in the collection address this:")."""


@dataclass(frozen=True)
class Evidence:
    """A span of a paper's abstract that supports a claim."""

    paper_id: str
    start: int
    end: int
    score: float = 1.0


@dataclass(frozen=True)
class Claim:
    """A sentence of an answer with the evidence it stands on (none for framing), and for
    list-like answers the paper it is listed under."""

    text: str
    evidence: tuple[Evidence, ...] = ()
    kind: SentenceKind = "claim"
    heading: str | None = None

    @property
    def papers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(evidence.paper_id for evidence in self.evidence))


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
# "Yes", "Broadly yes"; "Not really", "Not in the same way": the answers a yes/no opener
# gives, alone ("Yes.") or glued to the claim that bears it out ("Yes, both ...").
_YES = r"(?:(?:broadly|mostly|largely) )?yes"
_SOFT_NO = r"not (?:really|quite|exactly|in the same way)"
_YES_NO_OPENER = re.compile(
    rf"^(?:{_YES}|no|{_SOFT_NO}|partly|partially|indeed|correct|incorrect)\b[\s,.!;:-]*$",
    re.IGNORECASE,
)
_PAPER_NOUN = r"(?:papers?|works?|stud(?:y|ies)|articles?)"
_COUNT_OPENER = re.compile(
    r"^(?:(?P<count>one|two|three|four|five|six|both|several|many|some|multiple|a few|\d+)"
    rf"\s+(?:of the\s+)?(?:\w+\s+)?{_PAPER_NOUN}\b.{{0,160}}"
    r"|(?:the )?(?:collection|indexed papers) (?:has|have|contains?) .{0,60})[.:]?$",
    re.IGNORECASE,
)
_PAPERS = re.compile(rf"\b{_PAPER_NOUN}\b", re.IGNORECASE)
_REFERENCE_BACK = re.compile(
    r"^(?P<ref>it|its|they|their|this|these|those|such|the authors|the paper|the work|"
    r"the study|the method|the approach|the model|the framework|the technique|"
    r"this (?:method|approach|work|paper|study|model|framework|technique|algorithm|result|"
    r"finding|analysis|benchmark|dataset|idea|design|strategy|gain|improvement|loss)|"
    r"these (?:methods|results|findings|models|papers)|their (?:method|approach|work|analysis|"
    r"results?|model|framework))\b",
    re.IGNORECASE,
)
# A phrase before the subject: "Evaluated on three datasets, it raises ...", "In
# experiments, they ...", "However, this ..." (led by a participle, adverb or preposition).
_INTRODUCTION = re.compile(
    r"(?:\w+(?:ed|ing|ly)|in|on|at|for|with|by|from|under|across|after|before|unlike|beyond|as|"
    r"when|while|to|however|moreover|instead|thus|then|also|here|overall|still|yet)\b"
    r"[^,;:]{0,80}?,\s+(?=(?:it|its|they|their|this|these)\b)",
    re.IGNORECASE,
)
# Where the papers are, which no abstract says: "Several papers in the collection ...".
_ABOUT_THE_COLLECTION = re.compile(
    r"\s+(?:in|from|among) (?:this|the) (?:collection|corpus|indexed papers)\b", re.IGNORECASE
)
_COUNT_OPENER_WORDS = 20
# Words a count opener may have after its count ("Three papers address this question.").
_COUNT_OPENER_REST = 4
# "At least two papers study X [1][2]", "Two papers do: A for B and C for D [1][2]": a
# count of the papers the sentence cites, then a claim about them.
_COUNT_PREFIX = re.compile(
    r"^(?P<bound>at least |exactly |only )?(?P<count>two|three|four|five|six|both|\d+)\s+"
    r"(?:of the\s+)?(?:\w+\s+)?(?:papers|works|studies|articles)\b(?:\s+do\b)?[\s:,]*",
    re.IGNORECASE,
)
# "Yes. It does", and a yes/no answer glued to the claim that bears it out ("Yes, both
# ...", "Not really: one ..."); "No, ..." is left whole, as a claim it negates.
_GLUED_OPENER = re.compile(rf"^((?:yes|no)[.!]|{_YES}[,;:]|{_SOFT_NO}[,;:])\s+(?=\S)", re.I)
# References back that stand for a thing (a method, a model), which a name can replace;
# "The authors", "They" and "This gain" are left as written.
_THING = re.compile(
    r"^(?:it|its|this (?:method|approach|model|framework|technique|algorithm)|"
    r"the (?:method|approach|model|framework|technique))$",
    re.IGNORECASE,
)
Opener = Literal["yes", "no", "count", ""]
# What a sentence relating the papers it cites says of them together ("Both papers ...",
# "... in different ways", "one ..., the other ...").
_RELATING = re.compile(
    r"\b(?:both|neither|the two|differ(?:s|ent|ently|ences?)?|opposite|contrast|whereas|"
    r"unlike|one\b[^.;:]*\bthe other)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DraftSentence:
    """A sentence of a generated answer: its text without markers, the sources it cites
    (0-based), the text to check (`checked`: a reference back resolved to what the previous
    sentence was about) and, for a short opener, which kind it is."""

    text: str
    cited: tuple[int, ...]
    checked: str
    opener: Opener = ""
    refers_back: bool = False

    @property
    def relates_papers(self) -> bool:
        """Whether it cites several papers and says how they compare."""
        return len(self.cited) > 1 and bool(_RELATING.search(self.text))

    def citing(self, more) -> DraftSentence:
        return replace(self, cited=tuple(dict.fromkeys((*self.cited, *more))))


@dataclass
class Draft:
    """A generated answer read into sentences; `invalid` counts out-of-range citations and
    `refused` says the model wrote that the sources do not answer."""

    sentences: list[DraftSentence] = field(default_factory=list)
    invalid: int = 0
    refused: bool = False


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


def read_draft(answer: str, n_sources: int) -> Draft:
    """The sentences of a generated answer with the sources each cites.

    Markers that the sentence splitter puts at the start of the next sentence are given
    back to the sentence they close; a sentence that refers back and cites nothing cites
    what the previous one cites."""
    draft = Draft()
    for sentence in _sentences(answer):
        leading = _LEADING_MARKERS.match(sentence)
        if leading and draft.sentences:
            _, numbers, bad = parse_citations(leading.group(0), n_sources)
            draft.invalid += bad
            draft.sentences[-1] = draft.sentences[-1].citing(n - 1 for n in numbers)
            sentence = sentence[leading.end() :]
        text, numbers, bad = parse_citations(sentence, n_sources)
        draft.invalid += bad
        text = _LABEL.sub("", text).strip()
        if not any(char.isalpha() for char in text):
            continue
        if _REFUSAL.search(text):
            draft.refused = True
            continue
        if draft.sentences and draft.sentences[-1].text == text:
            continue
        draft.sentences.append(_read(text, tuple(n - 1 for n in numbers), draft.sentences))
    return draft


def _sentences(answer: str) -> list[str]:
    """The sentences of `answer`, with a leading "Yes." or "No." on its own (punkt reads
    "No." as the abbreviation of "number")."""
    sentences = []
    for start, end in sentence_spans(answer):
        sentence = answer[start:end]
        opener = _GLUED_OPENER.match(sentence)
        if opener:
            sentences.append(opener.group(1))
            sentence = sentence[opener.end() :]
        sentences.append(sentence)
    return sentences


def _read(text: str, cited: tuple[int, ...], before: list[DraftSentence]) -> DraftSentence:
    opener = opener_kind(text)
    if opener:
        return DraftSentence(text, cited, text, opener)
    said = _ABOUT_THE_COLLECTION.sub("", text)
    counted = _counted_claim(said, cited)
    if counted:
        return DraftSentence(text, cited, counted)
    previous = next((s for s in reversed(before) if not s.opener), None)
    intro = _INTRODUCTION.match(said)
    start = intro.end() if intro else 0
    reference = _REFERENCE_BACK.match(said[start:])
    if reference is None or previous is None:
        return DraftSentence(text, cited, said)
    subject = subject_of(previous.checked) if _THING.match(reference.group("ref")) else ""
    rest = said[start + reference.end() :].lstrip()
    checked = f"{said[:start]}{subject} {rest}" if subject else said
    return DraftSentence(text, cited or previous.cited, checked, refers_back=True)


def opener_kind(text: str) -> Opener:
    """'yes' or 'no' for a bare yes/no opener, 'count' for "Two papers do." and the like."""
    if _YES_NO_OPENER.match(text):
        return "no" if text.lower().startswith(("no", "not", "incorrect")) else "yes"
    count = _COUNT_OPENER.match(text)
    if count is None or len(text.split()) > _COUNT_OPENER_WORDS:
        return ""
    noun = _PAPERS.search(text)
    one = (count.group("count") or "").lower() == "one"
    if noun and one and noun.group(0).lower().endswith("s"):
        return ""  # "One studies X": a verb, not "one study"
    # "Two papers do: A for B and C for D" says more than a count: it is a claim
    rest = text[noun.end() :] if noun else text
    return "count" if len(rest.split()) <= _COUNT_OPENER_REST else ""


def opener_count(text: str) -> int | None:
    """The number of papers a count opener states, when it states one."""
    match = _COUNT_OPENER.match(text)
    word = (match.group("count") or "").lower() if match else ""
    if word in ("both", "one"):
        return 2 if word == "both" else 1
    value = NUMBER_WORDS.get(word, word)
    return int(value) if value.isdigit() else None


def _counted_claim(text: str, cited: tuple[int, ...]) -> str:
    """The claim after a count of papers ("At least two papers study X"), when the sentence
    cites that many papers (at least that many, for "at least"); empty otherwise, and the
    count is then checked as any number is."""
    match = _COUNT_PREFIX.match(text)
    if match is None or len(text) == match.end():
        return ""
    word = match.group("count").lower()
    count = 2 if word == "both" else int(NUMBER_WORDS.get(word, word))
    at_least = (match.group("bound") or "").lower().startswith("at least")
    if len(cited) < count or (len(cited) > count and not at_least):
        return ""
    rest = text[match.end() :]
    return rest[:1].upper() + rest[1:]


def subject_of(sentence: str) -> str:
    """The method, model or dataset a sentence is about, for resolving "It ..." in the next
    one: its first name of letters (not '4-bit', 'k-1'); empty when it names none."""
    for word in tokens(sentence):
        letters = sum(char.isalpha() for char in word)
        if looks_like_name(word) and letters >= 2 and letters > len(word) / 2:
            return word
    return ""
