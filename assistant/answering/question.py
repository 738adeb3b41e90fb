"""What a question asks: its intent, the papers, authors, venue and year it names, and the
thing it wants stated. Worked out once per question, before retrieval, and shown to the
user with the answer (`Answer.understood`) so they can see why an answer looks as it does.

Metadata is recognised against the indexed papers (a `Catalog`), never guessed: an author
is a name some indexed paper lists (matched ignoring case and diacritics, by full name,
initials and surname, or surname alone when written with a capital or after "by"), a
venue or year is one some indexed paper has, a paper is named by its title (most of its
words) or by a method name only a few papers mention."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from ..corpus import Paper
from ..lexicon import (
    QUESTION_WORDS,
    STOPWORDS,
    common_words,
    content_stems,
    fold,
    looks_like_name,
    quantities,
    stem,
    tokens,
)
from ..text import sentence_spans

Intent = Literal["fact", "number", "method", "yes_no", "list", "summary", "comparison"]

_AUXILIARY = r"(?:is|are|was|were|do|does|did|can|could|would|should|will|has|have|had|might|may)"
_NOT_AUXILIARY = rf"(?!{_AUXILIARY}\b)"
_SUMMARY = re.compile(
    r"(?:^|[.?!:]\s+)(?:(?:can|could|would) you\s+)?(?:please\s+)?(?:summari[sz]e|sum up|"
    r"(?:give (?:me )?|i'd like |i would like |i want |i need )?(?:a|an) "
    r"(?:(?:quick|short|brief|high-level|concise) )?(?:summary|overview|rundown)|"
    r"(?:a |an )?(?:summary|overview|rundown) of|tell me about|describe the (?:paper|work|study)|"
    r"walk me through (?:the (?:paper|work|study)\b|['\"\u201c])|tl;?dr)"
    r"|\b(?:short|quick|brief) version of\b|\b(?:key|main) (?:points|ideas|takeaways) of\b"
    r"|\bin (?:a few sentences|brief)\b"
    r"|\bwhat(?: is|'s) the (?:gist|main idea|upshot) of\b"
    r"|\bwhat (?:is|was) (?:the )?(?:paper|work|study|article)\b.*\babout\b"
    r"|\bwhat(?: is|'s| are) .{2,120} about\s*(?:,|$|\?(?![^?]*\?))",
    re.IGNORECASE,
)
# "What held earlier work back?", "what gap does X start from": asks about what came before
# the paper, which abstracts state before their contribution.
_BACKGROUND = re.compile(
    r"\b(?:before (?:the |this |it\b|(?-i:[A-Z]))|earlier (?:\w+ )?(?:work|methods?|approaches|"
    r"studies|analys[ie]s|attempts|results)|prior (?:work|methods?|approaches|studies)|"
    r"existing (?:\w+ )?(?:methods?|approaches|work)|held? back|holds? back|gap|shortcomings?|"
    r"limitations? of)",
    re.IGNORECASE,
)
# "What did X show?" asks for a summary only when X names a paper or its authors; "what do
# the experiments show?" asks for one finding.
_WHAT_DID = re.compile(
    r"\bwhat (?:did|does|do) (?!(?:the |these |its |their )?(?:experiments?|results?|"
    r"findings?|figures?|data|numbers?)\b)(?:(?!\beach\b).){2,80} "
    r"(?:show|(?<!\bto )do|propose|prove|find|contribute|study|present|argue|conclude|"
    r"introduce|establish|investigate|develop)\b",
    re.IGNORECASE,
)
_LIST = re.compile(
    rf"\b(?:which|what)\s+(?:{_NOT_AUXILIARY}[\w-]+\s+){{0,3}}?(?:papers|works|studies|articles)\b"
    r"|\b(?:list|any|all)\s+(?:the\s+)?(?:[\w-]+\s+)?papers\b"
    r"|\bpapers\s+(?:in|from|of)\s+(?:this|the)\s+collection\b"
    r"|\bare there\s+(?:[\w-]+\s+){0,2}?(?:papers|works|studies|methods|approaches)\b",
    re.IGNORECASE,
)
# "Which methods ...?" asks for a list unless the question names the paper it is about
# ("which baseline methods does it beat?", "against which approaches do they compare?").
_LIST_OF_METHODS = re.compile(
    rf"\b(?:which|what)\s+(?:{_NOT_AUXILIARY}[\w-]+\s+){{0,3}}?(?:methods|approaches|ones)\b",
    re.IGNORECASE,
)
# The full stop of "et al." ends no sentence and no clause the patterns above read.
_ET_AL = re.compile(r"\bet al\.", re.IGNORECASE)
# "Which papers ...? What does each find?": the list is asked for before the last sentence.
_EACH = re.compile(r"\beach\b", re.IGNORECASE)
_COMPARISON = re.compile(
    r"\b(?:compare|compared|comparison|contrast|differ|differs|difference|differences|versus|"
    r"vs\.?)\b|\bboth\b|\beach\b.{0,60}\b(?:and|vs)\b"
    r"|\b(?:how|what) do .{2,150} and .{2,150} each\b"
    # "X and Y each have ...", not "..., and what share does each subspace take?"
    r"|\band\s+(?!(?:what|how|which|where|why|when|who)\b)[^.?]{2,150}\beach\b(?!\s+of\b)",
    re.IGNORECASE,
)
# Two papers spoken of where only one may be recognised by name: "the Linguistic Collapse
# study and the linear-regression scaling-law paper", "the diffusion bounds and the parity
# paper both ...", "one solves ..., the other ..."; not "which of the two models can mimic
# the other", two things one paper compares.
_PAPER_NOUN = r"\b(?:paper|study|work|method|approach|article|analysis)\b"
_TWO_PAPERS = re.compile(
    rf"{_PAPER_NOUN}[^.?]{{0,100}}\band\b[^.?]{{0,100}}{_PAPER_NOUN}"
    rf"|\band\b[^.?]{{0,100}}{_PAPER_NOUN}\s+(?:both|each)\b"
    rf"|{_PAPER_NOUN}\s+and\s+[^.?]{{2,100}}?\s(?:both|each)\b"
    r"|\bthe other (?:paper|study|work|one)\b|\bone\b[^.?]{0,100},\s*the other\b"
    r"|\b(?:two|both) (?:papers|studies|works|methods|approaches|articles)\b",
    re.IGNORECASE,
)
_YES_NO = re.compile(rf"^\s*(?:{_AUXILIARY}|isn't|aren't|doesn't|don't)\b", re.IGNORECASE)
_LEAD_IN = re.compile(r"^\s*(?:according to|in|for|under|with|when|if)\b[^,?]{0,120},\s*", re.I)
# "How does X work / find / use ...": asks for a mechanism, which the sentences after a
# paper's statement of its method usually give.
_METHOD = re.compile(
    r"^\s*(?:how (?:does|do|did|is|are|can)\b(?!.*\b(?:differ|compare)\w*\b)|"
    r"what (?:steps|components|mechanism)\b|in what way\b)",
    re.IGNORECASE,
)
_QUANTITY = re.compile(
    r"\bhow (?:many|much|large|big|fast|long|often|far|small|high|low)\b|"
    # "what worst-group accuracy", "what PSNR gain": a figure, whatever the measure's modifiers
    r"\bwhat (?:(?!(?:kind|type|sort|do|does|did|is|are|was|were|can|could|would|will)\b)"
    r"[\w-]+ ){0,2}(?:percentage|fraction|share|proportion|number|speed-?up|ratio|factor|"
    r"accuracy|score|size|value|perplexity|auc|auroc|map|psnr|gain)s?\b|"
    r"\bfrom what\b|"
    r"\bby (?:how much|what (?:factor|margin|percentage|amount))\b|\bto what (?:extent|degree)\b",
    re.IGNORECASE,
)
_WHICH_PAPER = re.compile(
    rf"\b(?:which|what)\s+(?:{_NOT_AUXILIARY}[\w$-]+\s+){{0,4}}?"
    r"(paper|work|study|method|approach|article)\b",
    re.IGNORECASE,
)
# "what learning rate did ...", "how many tasks are ...", "what is the licence of ...":
# the thing a sentence must name to answer.
_ASKED_FOR = re.compile(
    rf"\b(?:what|which|how many)\s+((?:{_NOT_AUXILIARY}[A-Za-z0-9][\w+\-]*\s+){{1,6}}?)"
    rf"{_AUXILIARY}\b"
    r"|\bwhat\s+(?:is|are|was|were)\s+the\s+((?:[A-Za-z0-9][\w+\-]*\s+){1,3}?)"
    r"(?:of|for|in|on|at|that|when|used)\b",
    re.IGNORECASE,
)
_VAGUE_THINGS = frozenset(
    [
        "kind",
        "kinds",
        "type",
        "types",
        "sort",
        "level",
        "degree",
        "extent",
        "percentage",
        "percent",
        "number",
        "amount",
        "fraction",
        "proportion",
        "share",
        "class",
    ]
)
_NOT_CONTENT = STOPWORDS | QUESTION_WORDS
_AUTHOR_CUE = re.compile(r"\b(?:by|from|authors?|et al|co-?authors?|wrote|written)\b", re.I)
_YEAR = re.compile(r"\b(19[5-9]\d|20\d\d)\b")
_NAME_WORD = re.compile(r"[^\W\d_][\w'’.\-]*")
_POSSESSIVE = re.compile(r"['’]s$")
# A method name shared by more papers than this says less about which paper is meant.
_NAMED_BY_FEW = 3
# A title counts as named when the question has this share of its content words.
_TITLE_SHARE = 0.85
_TITLE_MIN_WORDS = 3


@dataclass(frozen=True)
class AuthorMatch:
    """An indexed author the question names, the words it was recognised by, its papers."""

    name: str
    matched: str
    papers: frozenset[str]


class Catalog:
    """What the question analysis matches against: the indexed papers' authors, venues,
    years, titles and the method names in their abstracts. Built once per index generation."""

    def __init__(self, papers: Iterable[Paper]) -> None:
        self.papers: dict[str, Paper] = {paper.paper_id: paper for paper in papers}
        self.full_names: dict[str, set[str]] = defaultdict(set)
        self.surnames: dict[str, set[str]] = defaultdict(set)
        self.by_author: dict[str, set[str]] = defaultdict(set)
        self.venue_words: dict[str, str] = {}
        self.years: set[str] = set()
        self.names: dict[str, set[str]] = defaultdict(set)
        self.title_stems: dict[str, set[str]] = {}
        self.short_titles: dict[str, str] = {}
        self.title_phrases: dict[str, set[str]] = defaultdict(set)
        self.document_frequency: Counter[str] = Counter()
        for paper in self.papers.values():
            self._add(paper)

    def _add(self, paper: Paper) -> None:
        for author in paper.authors:
            self.by_author[author].add(paper.paper_id)
            for form in _name_forms(author):
                self.full_names[form].add(author)
            parts = _NAME_WORD.findall(fold(author))
            if parts:
                self.surnames[parts[-1]].add(author)
        if paper.venue:
            for word in _NAME_WORD.findall(paper.venue):
                if word[:1].isupper():
                    self.venue_words[fold(word)] = word
        if paper.publication_year is not None:
            self.years.add(str(paper.publication_year))
        text = paper.title_and_abstract
        self.document_frequency.update(content_stems(text))
        for word in tokens(text):
            if looks_like_name(word) and len(word) > 2:
                self.names[_name_key(word)].add(paper.paper_id)
        if paper.title:
            self.title_stems[paper.paper_id] = content_stems(paper.title, QUESTION_WORDS)
            for phrase in _phrases(fold(paper.title)):
                self.title_phrases[phrase].add(paper.paper_id)
            short, colon, _ = paper.title.partition(":")
            if colon and len(short.split()) <= 3:
                self.short_titles[paper.paper_id] = short.strip()

    def authors_named(self, question: str) -> list[AuthorMatch]:
        """Indexed authors the question names."""
        found: dict[str, str] = {}
        for form in _runs(fold(question)):
            for author in self.full_names.get(form, ()):
                found.setdefault(author, form)
        cue = bool(_AUTHOR_CUE.search(question))
        for word in _NAME_WORD.findall(question):
            key = _POSSESSIVE.sub("", fold(word)).strip(".'’")
            if len(key) < 3 or key in STOPWORDS or key in QUESTION_WORDS:
                continue
            authors = self.surnames.get(key)
            if not authors or any(key in fold(name) for name in found.values()):
                continue
            if word[0].isupper() or cue:
                for author in authors:
                    found.setdefault(author, key)
        return [
            AuthorMatch(author, matched, frozenset(self.by_author[author]))
            for author, matched in found.items()
        ]

    def venue_named(self, question: str) -> str | None:
        for word in _NAME_WORD.findall(question):
            venue = self.venue_words.get(fold(word))
            if venue and len(venue) > 2:
                return venue
        return None

    def year_named(self, question: str) -> str | None:
        return next((year for year in _YEAR.findall(question) if year in self.years), None)

    def papers_by_title(self, question: str) -> tuple[set[str], set[str]]:
        """Papers whose title the question gives (most of its words, its short name, or a
        phrase of it no other title has), and papers named only by a phrase that two or
        three titles share ('linear regression')."""
        asked = content_stems(question, QUESTION_WORDS)
        folded = fold(question)
        named = set()
        for paper_id, title in self.title_stems.items():
            if len(title) >= _TITLE_MIN_WORDS and len(asked & title) >= _TITLE_SHARE * len(title):
                named.add(paper_id)
        for paper_id, short in self.short_titles.items():
            # a short title that is an everyday word ('CARE') names its paper only as written
            everyday = short.lower() in common_words()
            if _has_phrase(question, short) if everyday else _has_phrase(folded, fold(short)):
                named.add(paper_id)
        by_phrase = [self.title_phrases.get(phrase, set()) for phrase in sorted(_phrases(folded))]
        shared: set[str] = set()
        # the phrases naming fewest papers first: a phrase of a title the question names
        # more precisely ('non-linear perceptron') names that paper, not others sharing a phrase
        for papers in sorted(by_phrase, key=len):
            if len(papers) <= _NAMED_BY_FEW and not papers & (named | shared):
                (named if len(papers) == 1 else shared).update(papers)
        return named, shared

    def papers_by_name(self, question: str) -> tuple[set[str], list[str]]:
        """Papers that mention a method, model or dataset name the question uses, when few
        do; and those names."""
        named: set[str] = set()
        names = []
        for word in tokens(question):
            if not looks_like_name(word) or len(word) < 3:
                continue
            papers = self.names.get(_name_key(word), set())
            if papers:
                names.append(word)
            if 0 < len(papers) <= _NAMED_BY_FEW:
                named |= papers
        return named, list(dict.fromkeys(names))

    def unfamiliar(self, question: str) -> tuple[tuple[str, ...], float]:
        """The question's content words that no indexed paper uses and that are not
        everyday English, and their share of its content words, each weighted by its
        inverse document frequency: a question about a topic the collection lacks
        ("watermarking") has a large share, one in the asker's own words ("later") not."""
        # a compound counts by its parts: 'loss-landscape' is familiar where both are
        asked = {word for word in content_stems(question, _NOT_CONTENT) if "-" not in word}
        if not asked:
            return (), 0.0
        count = len(self.papers) + 1
        weight = {s: math.log(count / (self.document_frequency[s] + 0.5)) for s in asked}
        everyday = {stem(w.lower()) for w in tokens(question) if w.lower() in common_words()}
        unknown = {s for s in asked if not self.document_frequency[s]} - everyday
        words = [w for w in tokens(question) if stem(w.lower()) in unknown]
        share = sum(weight[s] for s in unknown) / sum(weight.values())
        return tuple(dict.fromkeys(words)), share


def _runs(folded: str, longest: int = 4) -> list[str]:
    """Every run of one to `longest` words of a folded text, as written ('y. lecun')."""
    words = _NAME_WORD.findall(folded)
    return [
        " ".join(words[start : start + size])
        for size in range(1, longest + 1)
        for start in range(len(words) - size + 1)
    ]


def _phrases(folded: str) -> set[str]:
    """Runs of two to four content words ('credal deep ensembles'): a title's phrases name
    its paper when no more than a few titles share them."""
    words = re.findall(r"[a-z0-9][a-z0-9\-]*", folded)
    found = set()
    for size in (2, 3, 4):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            edges = {run[0], run[-1]}
            if not edges & STOPWORDS and run[-1] not in QUESTION_WORDS:
                found.add(" ".join(run))
    return found


def _name_key(word: str) -> str:
    """How a name is looked up: 'CIFAR-10' -> 'cifar10', 'LLMs' -> 'llm'."""
    key = re.sub(r"[^a-z0-9]", "", word.lower())
    return key[:-1] if len(key) > 3 and key.endswith("s") and not key.endswith("ss") else key


def _name_forms(author: str) -> set[str]:
    """How a question may write an author: 'yann lecun', 'y. lecun', 'y lecun'."""
    parts = _NAME_WORD.findall(fold(author))
    if len(parts) < 2:
        return set()
    first, last = parts[0], parts[-1]
    return {" ".join(parts), f"{first} {last}", f"{first[0]}. {last}", f"{first[0]} {last}"}


def _has_phrase(text: str, phrase: str) -> bool:
    return bool(re.search(rf"(?<![\w]){re.escape(phrase)}(?![\w])", text))


@dataclass(frozen=True)
class Question:
    """A question as understood: `text` as asked, `standalone` after a follow-up was
    rewritten, `search_text` what retrieval looks for (metadata mentions removed), and
    what restricts (`paper_ids`, from authors, venue and year) or favours (`named_papers`,
    from titles and method names) papers."""

    text: str
    standalone: str
    intent: Intent
    search_text: str
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: str | None = None
    paper_ids: frozenset[str] | None = None
    named_papers: frozenset[str] = frozenset()
    names: tuple[str, ...] = ()
    asked_for: frozenset[str] = frozenset()
    wants_number: bool = False
    which_paper: bool = False
    unfamiliar_words: tuple[str, ...] = ()
    unfamiliar_share: float = 0.0
    parts: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def asked(self) -> str:
        """The last sentence of the standalone question: what is asked, when a follow-up was
        rewritten as 'previous question + follow-up'."""
        return asked_part(self.standalone)

    @cached_property
    def given_figures(self) -> frozenset[str]:
        """The figures the question states itself ("80%" in "What perplexity at 80%?")."""
        return frozenset(quantities(self.standalone))

    @property
    def asks_background(self) -> bool:
        """Whether the question asks what came before the paper: the gap it starts from,
        what held earlier work back."""
        return bool(_BACKGROUND.search(self.asked))

    def gives_figure(self, text: str) -> bool:
        """Whether `text` states a figure the question does not give itself: "80% sparsity"
        does not answer "What perplexity at 80% sparsity?"."""
        return bool(quantities(text) - self.given_figures)

    @property
    def is_multi_paper(self) -> bool:
        return self.intent in ("list", "comparison")

    @property
    def further_parts(self) -> int:
        """How many things the question asks beyond the first (`parts`)."""
        return max(len(self.parts) - 1, 0)

    def to_json(self) -> dict:
        """What was understood, for `ask --json` and the UI."""
        return {
            "intent": self.intent,
            "authors": list(self.authors),
            "venue": self.venue,
            "year": self.year,
            "papers": sorted(self.named_papers | (self.paper_ids or frozenset())),
            "names": list(self.names),
            "unfamiliar_words": list(self.unfamiliar_words),
            "notes": list(self.notes),
        }


# Where a question asks a second thing: ", and why ...", "...? How ...", "; ...".
_PART_BREAK = re.compile(
    r",? and (?=(?:what|how|why|which|who|where|when|is there|are there|does|do|did|can|"
    r"could|was|were|is|are)\b)|\?\s+(?=[A-Z])|;\s+",
    re.IGNORECASE,
)
_MIN_PART_WORDS = 3


def question_parts(question: str) -> tuple[str, ...]:
    """The things a question asks when it asks several ('What does XRM train, and which
    requirement does it drop?'); none when it asks one."""
    parts = [part.strip(" ,?") for part in _PART_BREAK.split(question)]
    parts = [f"{part}?" for part in parts if len(part.split()) >= _MIN_PART_WORDS]
    return tuple(parts) if len(parts) > 1 else ()


def asked_part(question: str) -> str:
    spans = sentence_spans(question)
    return question[spans[-1][0] : spans[-1][1]] if len(spans) > 1 else question


def intent_of(
    question: str, named: int = 0, identified: bool = False, pinned: bool = False
) -> Intent:
    """fact, number, yes_no, list, summary or comparison, from the wording, the number of
    papers the question names (`named`), whether it identifies papers by title, method,
    author or venue (`identified`), and whether by its whole title, a method's name or its
    authors, not by a phrase other titles share too (`pinned`)."""
    question = _ET_AL.sub("et al", question)
    asked = asked_part(question)
    compares = bool(_COMPARISON.search(question)) and (
        named >= 2 or (named == 1 and bool(_TWO_PAPERS.search(question)))
    )
    lists = _asks_for_list(asked, pinned) or (
        bool(_EACH.search(asked)) and _asks_for_list(question, pinned)
    )
    if lists and not compares:
        return "list"
    if compares:
        return "comparison"
    if _SUMMARY.search(question) or (identified and _WHAT_DID.search(asked)):
        return "summary"
    if _YES_NO.match(_LEAD_IN.sub("", asked)):
        return "yes_no"
    if _QUANTITY.search(asked):
        return "number"
    if _METHOD.search(asked):
        return "method"
    return "fact"


def _asks_for_list(text: str, pinned: bool) -> bool:
    return bool(_LIST.search(text) or (not pinned and _LIST_OF_METHODS.search(text)))


def _asked_for(asked: str) -> frozenset[str]:
    match = _ASKED_FOR.search(asked)
    if not match:
        return frozenset()
    phrase = match.group(1) or match.group(2)
    words = [
        word
        for word in tokens(phrase)
        if word.lower() not in STOPWORDS
        and word.lower() not in QUESTION_WORDS
        and word.lower() not in _VAGUE_THINGS
        and not looks_like_name(word)
    ]
    return frozenset(stem(word.lower()) for word in words)


def analyse(question: str, standalone: str, catalog: Catalog) -> Question:
    """Understand `standalone` (the question after follow-up rewriting)."""
    asked = asked_part(standalone)
    authors = catalog.authors_named(standalone)
    venue = catalog.venue_named(standalone)
    year = catalog.year_named(standalone)
    by_name, names = catalog.papers_by_name(standalone)
    by_title, by_shared_phrase = catalog.papers_by_title(standalone)
    named = by_title | by_name | by_shared_phrase
    allowed, notes = _restriction(catalog, authors, venue, year)
    identified = bool(named) or bool(authors)
    by_author = allowed if allowed is not None and len(allowed) <= _NAMED_BY_FEW else set()
    pinned = bool(by_title or by_name or authors)
    precise = set(by_title | by_name) | by_author
    # a phrase several titles share ("large language models") names no paper of its own
    intent = intent_of(standalone, len(precise) or min(len(named), 1), identified, pinned)
    if intent == "comparison" and len(by_title | by_author) >= 2:
        # The papers named by title or authors are what is compared; a name or a phrase
        # other papers share too ('Memory-Efficient', 'SSMs') described one of them.
        named = by_title | by_author
    elif intent == "comparison" and len(by_title | by_name | by_author) >= 2:
        # Two papers named precisely are what is compared; a phrase several titles share
        # ("Marion & Chizat's deep linear regression paper") only described one of them.
        named -= by_shared_phrase - by_title - by_name - by_author
    elif intent == "summary" and by_title:
        # A quoted title is the paper to summarise; titles sharing its phrases are not.
        named = by_title
    if intent == "comparison" and by_author:
        # "X's paper and the paper on Y": the author names one side, not the whole answer.
        named, allowed = frozenset(named) | frozenset(by_author), None
    which = _WHICH_PAPER.search(asked)
    if intent == "fact" and authors and allowed and not _ASKED_FOR.search(asked):
        intent = "summary"
    search_text = _without_metadata(standalone, authors, venue, year)
    unfamiliar_words, unfamiliar_share = catalog.unfamiliar(search_text)
    return Question(
        text=question,
        standalone=standalone,
        intent=intent,
        search_text=search_text,
        authors=tuple(match.name for match in authors),
        venue=venue,
        year=year,
        paper_ids=frozenset(allowed) if allowed is not None else None,
        named_papers=frozenset(named),
        names=tuple(names),
        asked_for=_asked_for(asked),
        wants_number=intent == "number" or bool(_QUANTITY.search(asked)),
        which_paper=bool(which) and which.group(1).lower() in ("paper", "work", "study", "article"),
        unfamiliar_words=unfamiliar_words,
        unfamiliar_share=unfamiliar_share,
        parts=question_parts(question if question == standalone else asked),
        notes=tuple(notes),
    )


# This many authors named together read as a paper's whole author list.
_FULL_AUTHOR_LIST = 3


def _restriction(
    catalog: Catalog, authors: list[AuthorMatch], venue: str | None, year: str | None
) -> tuple[set[str] | None, list[str]]:
    """The papers the named authors, venue and year allow (None: no restriction). Several
    authors mean their joint papers when they have any; a restriction that would leave no
    paper is dropped, and a note says so."""
    notes = []
    allowed: set[str] | None = None
    if authors:
        # one surname may match several authors ('Cao'): each mention allows any of theirs
        by_mention: dict[str, set[str]] = defaultdict(set)
        for match in authors:
            by_mention[match.matched] |= match.papers
        sets = list(by_mention.values())
        joint = set.intersection(*sets)
        # "the paper by A, B, C and D": when three or more are named, a joint paper that has
        # no other author is the one meant (they may share a longer-authored one)
        whole = {p for p in joint if len(catalog.papers[p].authors) == len(sets)}
        if len(sets) >= _FULL_AUTHOR_LIST and len(whole) == 1:
            joint = whole
        allowed = joint or set.union(*sets)
    for label, value in (("venue", venue), ("year", year)):
        if value is None:
            continue
        matching = {
            paper_id
            for paper_id, paper in catalog.papers.items()
            if (
                str(paper.publication_year) == value
                if label == "year"
                else value.casefold() in (paper.venue or "").casefold()
            )
        }
        narrowed = matching if allowed is None else allowed & matching
        if narrowed:
            allowed = narrowed
        else:
            notes.append(f"no indexed paper matches {label} {value} together with the rest")
    return allowed, notes


def _without_metadata(
    question: str, authors: list[AuthorMatch], venue: str | None, year: str | None
) -> str:
    """The question with author names, venue and year taken out: what to search for."""
    text = question
    for match in authors:
        for word in dict.fromkeys([match.name, *match.name.split(), match.matched]):
            text = re.sub(rf"(?<![\w]){re.escape(word)}(?![\w])", " ", text, flags=re.I)
    for value in (venue, year):
        if value:
            text = re.sub(rf"\b{re.escape(value)}\b", " ", text, flags=re.I)
    cleaned = " ".join(text.split())
    return cleaned if any(ch.isalpha() for ch in cleaned) else question
