"""Verify a generated answer sentence by sentence against the papers it cites.

A sentence is checked against the union of what it cites: every sentence of the cited
papers' whole abstracts, with the question and the papers' titles, authors and venues as
words it may use freely (`SupportScorer`). A sentence that refers back ("It ...") is read
with what the previous one was about; an opener ("Yes.", "Two papers do.") is judged with
the claims after it, and a sentence relating the papers it cites ("Both papers ...") with
the claims about each of them. A sentence its citations do not support is re-attached to
the one retrieved paper that does, or removed and counted. Nothing is kept that no evidence
supports; every kept sentence carries the exact spans that support it.

`LocalVerifier` runs offline; `LLMVerifier` asks an OpenAI-compatible model instead and
falls back to the local one when the API fails."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from ..errors import BackendError
from ..lexicon import common_words
from ..prompts import render
from .checks import POLARITY_CHECKS, analyse, problems
from .claims import Claim, Draft, DraftSentence, Evidence, opener_count
from .passages import PaperText, Sentence
from .question import Question
from .support import Support, SupportScorer

if TYPE_CHECKING:
    from ..openai_api import ApiEndpoint

_AUXILIARY = re.compile(
    r"^\s*(?:according to [^,]+,\s*)?(?:is|are|was|were|do|does|did|can|could|would|should|"
    r"will|has|have|had)\s+",
    re.IGNORECASE,
)
# A sentence its citations do not support is checked against this many other papers, those
# with the sentence most like it; a repair never comes from further down.
REPAIR_CANDIDATES = 2
_VERDICT = re.compile(r"^\s*(\d+)\s*[:.)-]\s*(yes|no|supported|unsupported)\b", re.I | re.M)


@dataclass(frozen=True)
class Verdict:
    """What verification decided about one generated sentence: the claim kept (with its
    evidence), or None and why it was removed."""

    sentence: DraftSentence
    claim: Claim | None
    reason: str
    repaired: bool = False


@dataclass
class Verification:
    """The verdicts on a generated answer, in order; `note` says when the verifier asked
    for could not run and another did."""

    verdicts: list[Verdict] = field(default_factory=list)
    note: str | None = None

    @property
    def claims(self) -> list[Claim]:
        return [verdict.claim for verdict in self.verdicts if verdict.claim is not None]

    @property
    def dropped(self) -> int:
        return sum(verdict.claim is None for verdict in self.verdicts)


class Verifier(Protocol):
    """Decides which sentences of a draft the cited papers support."""

    name: str

    def verify(self, question: Question, draft: Draft, papers: list[PaperText]) -> Verification:
        """One verdict per draft sentence, in order. Source `n` of the draft is
        `papers[n - 1]`."""
        ...


class LocalVerifier:
    """Verification by the offline `SupportScorer`: deterministic and free."""

    name = "local"

    def __init__(self, scorer: SupportScorer) -> None:
        self.scorer = scorer

    def verify(self, question: Question, draft: Draft, papers: list[PaperText]) -> Verification:
        claims = [s for s in draft.sentences if not s.opener]
        cited = [_cited(sentence, papers) for sentence in claims]
        supports = self.scorer.assess_many(
            [_item(question, s, sources, draft) for s, sources in zip(claims, cited, strict=True)],
            syntheses=[len(sources) > 1 for sources in cited],
        )
        verdicts = {
            id(sentence): self._verdict(question, sentence, support, papers, draft)
            for sentence, support in zip(claims, supports, strict=True)
        }
        for sentence, support in zip(claims, supports, strict=True):
            if verdicts[id(sentence)].claim is None and sentence.relates_papers:
                verdicts[id(sentence)] = _relating_verdict(sentence, support, verdicts, papers)
        return Verification(_with_openers(question, draft, verdicts, papers))

    def _verdict(
        self,
        question: Question,
        sentence: DraftSentence,
        support: Support,
        papers: list[PaperText],
        draft: Draft,
    ) -> Verdict:
        cited = _cited(sentence, papers)
        if support.supported and sentence.cited:
            return Verdict(sentence, _claim(sentence, cited, support), support.reason)
        others = self._likeliest(
            sentence, [p for p in papers if p not in cited or not sentence.cited]
        )
        alternatives = self.scorer.assess_many(
            [_item(question, sentence, [paper], draft) for paper in others]
        )
        found = [(s.score, i) for i, s in enumerate(alternatives) if s.supported]
        if not found:
            return Verdict(sentence, None, support.reason)
        _, best = max(found)
        claim = _claim(sentence, [others[best]], alternatives[best])
        return Verdict(sentence, claim, f"re-attached: {alternatives[best].reason}", True)

    def _likeliest(self, sentence: DraftSentence, papers: list[PaperText]) -> list[PaperText]:
        """The `REPAIR_CANDIDATES` papers with the sentence closest to the claim: the only
        ones worth checking as the paper it should have cited."""
        if len(papers) <= REPAIR_CANDIDATES:
            return papers
        sentences = [[s.text for s in paper.supporting()] for paper in papers]
        vectors = self.scorer.embedder.embed([sentence.checked, *(t for g in sentences for t in g)])
        closeness, start = [], 1
        for group in sentences:
            block = vectors[start : start + len(group)] @ vectors[0]
            closeness.append(float(block.max()) if len(group) else 0.0)
            start += len(group)
        order = sorted(range(len(papers)), key=lambda i: -closeness[i])
        return [papers[i] for i in order[:REPAIR_CANDIDATES]]


class LLMVerifier:
    """An OpenAI-compatible model judges every claim of an answer in one call
    (`prompts/verify_claims.txt`); the local aligner then picks each kept claim's evidence
    spans. If the API fails, the local verifier decides and the note says so."""

    name = "llm"

    def __init__(self, endpoint: ApiEndpoint, fallback: LocalVerifier) -> None:
        self.endpoint = endpoint
        self.fallback = fallback
        self._client = endpoint.client()

    def verify(self, question: Question, draft: Draft, papers: list[PaperText]) -> Verification:
        claims = [s for s in draft.sentences if not s.opener]
        try:
            verdicts = self._ask(question, claims, papers)
        except BackendError as exc:
            verification = self.fallback.verify(question, draft, papers)
            verification.note = f"The LLM verifier failed ({exc}); the local verifier decided."
            return verification
        supports = self.fallback.scorer.assess_many(
            [_item(question, sentence, _cited(sentence, papers), draft) for sentence in claims]
        )
        decided = {}
        for number, (sentence, support) in enumerate(zip(claims, supports, strict=True), 1):
            cited = _cited(sentence, papers)
            keep = verdicts.get(number, False) and bool(sentence.cited)
            claim = _claim(sentence, cited, support) if keep else None
            decided[id(sentence)] = Verdict(sentence, claim, "LLM: " + ("yes" if keep else "no"))
        return Verification(_with_openers(question, draft, decided, papers))

    def _ask(
        self, question: Question, claims: list[DraftSentence], papers: list[PaperText]
    ) -> dict[int, bool]:
        sources = "\n\n".join(
            f"[{n}] {paper.paper.display_title}: {paper.paper.abstract}"
            for n, paper in enumerate(papers, 1)
        )
        listing = "\n".join(
            f"{n}. {s.text} (cites {', '.join(f'[{i + 1}]' for i in s.cited) or 'nothing'})"
            for n, s in enumerate(claims, 1)
        )
        prompt = render(
            "verify_claims", sources=sources, claims=listing, question=question.standalone
        )
        endpoint = self.endpoint
        reply = endpoint.complete(self._client, prompt, max_tokens=16 + 8 * len(claims))
        found = {
            int(m.group(1)): m.group(2).lower() in ("yes", "supported")
            for m in _VERDICT.finditer(reply)
        }
        if not found:
            raise BackendError(f"the verifier model '{endpoint.model}' gave no verdicts")
        return found


def _cited(sentence: DraftSentence, papers: list[PaperText]) -> list[PaperText]:
    return [papers[i] for i in sentence.cited if i < len(papers)]


def _item(
    question: Question, sentence: DraftSentence, cited: list[PaperText], draft: Draft
) -> tuple[str, list[str], str]:
    """What the scorer sees: the claim (a reference back resolved), the cited abstracts'
    sentences, and the words it may use freely."""
    known = [question.standalone, *(paper.context for paper in cited)]
    if sentence.refers_back:
        position = draft.sentences.index(sentence)
        known += [s.text for s in draft.sentences[:position] if not s.opener][-1:]
    evidence = [s.text for paper in cited for s in paper.supporting()]
    return sentence.checked, evidence, " ".join(known)


def _claim(sentence: DraftSentence, cited: list[PaperText], support: Support) -> Claim:
    """The kept sentence with the evidence spans it was aligned to, merged where they are
    adjacent sentences of the same paper."""
    pool: list[Sentence] = [s for paper in cited for s in paper.supporting()]
    spans = sorted((pool[i] for i in support.evidence), key=lambda s: (s.paper_id, s.start))
    merged: list[Evidence] = []
    for span in spans:
        last = merged[-1] if merged else None
        if last and last.paper_id == span.paper_id and span.start - last.end <= 1:
            merged[-1] = Evidence(span.paper_id, last.start, span.end, support.score)
        else:
            merged.append(Evidence(span.paper_id, span.start, span.end, support.score))
    return Claim(sentence.text, tuple(merged))


def _relating_verdict(
    sentence: DraftSentence,
    support: Support,
    verdicts: dict[int, Verdict],
    papers: list[PaperText],
) -> Verdict:
    """A sentence that relates the papers it cites ("Both papers treat the cost of selection
    as a first-class concern") says how they compare in its own words, which no abstract
    has. It stands as framing when the claims elsewhere in the answer that stand cite each
    of its papers, no hard check finds a problem, and every word the abstracts lack is an
    everyday word: a method, dataset or term they lack is still an invention."""
    cited = _cited(sentence, papers)
    standing = {p for v in verdicts.values() if v.claim is not None for p in v.claim.papers}
    everyday = common_words()
    if (
        support.contradicted
        or not {paper.paper_id for paper in cited} <= standing
        or any(word.lower() not in everyday for word in support.new_words)
    ):
        return verdicts[id(sentence)]
    claim = replace(_claim(sentence, cited, support), kind="framing")
    return Verdict(sentence, claim, "relates claims that stand")


def _with_openers(
    question: Question, draft: Draft, verdicts: dict[int, Verdict], papers: list[PaperText]
) -> list[Verdict]:
    """The verdicts in draft order, openers judged with the claims after them: "Yes." or
    "No." stands when the next claim stands and does not say the opposite (`_stance`);
    "Two papers do." when the papers it counts are cited by the kept claims after it."""
    ordered: list[Verdict] = []
    sentences = draft.sentences
    for position, sentence in enumerate(sentences):
        if not sentence.opener:
            ordered.append(verdicts[id(sentence)])
            continue
        after = [verdicts[id(s)] for s in sentences[position + 1 :] if not s.opener]
        ordered.append(_opener_verdict(question, sentence, after, papers))
    return ordered


def _opener_verdict(
    question: Question, opener: DraftSentence, after: list[Verdict], papers: list[PaperText]
) -> Verdict:
    kept = [verdict.claim for verdict in after if verdict.claim is not None]
    if not kept:
        return Verdict(opener, None, "nothing after it stands")
    if opener.opener == "count":
        return _count_verdict(opener, kept, {p.paper_id for p in _cited(opener, papers)})
    first = after[0].claim
    if first is None:
        return Verdict(opener, None, "the claim it answers with was removed")
    stance = _stance(question, first.text)
    if stance is not None and stance != (opener.opener == "yes"):
        return Verdict(opener, None, f"'{opener.text}' contradicts the claim after it")
    reason = "agrees with the claim after it" if stance is not None else "answers in other words"
    return Verdict(opener, Claim(opener.text, first.evidence, kind="opener"), reason)


def _count_verdict(opener: DraftSentence, kept: list[Claim], own: set[str]) -> Verdict:
    """ "Two papers do." stands when the kept claims after it cite that many papers, or,
    when it cites papers itself ("Two papers take this approach [1][2]."), when those are
    that many and the kept claims cite each of them."""
    count = opener_count(opener.text)
    cited = {paper for claim in kept for paper in claim.papers}
    counted = own if own and own <= cited else cited
    if (count is None and len(counted) >= 2) or count == len(counted):
        return Verdict(opener, Claim(opener.text, kind="framing"), "count matches")
    return Verdict(opener, None, f"says {opener.text!r} but {len(counted)} papers are cited")


# A claim that has at least this share of the yes/no question's content words restates
# its statement, so its polarity says yes or no; one with fewer answers in other words
# ("a pool of 2^poly(d) samples is needed") and only polarity clashes can show a wrong
# opener. Set on the dev half's openers: restating claims share 0.43-0.75, others 0.12.
RESTATING_SHARE = 0.3


def _stance(question: Question, claim: str) -> bool | None:
    """Whether `claim` answers the yes/no `question` with yes (True) or no (False), or
    None when it neither restates the question's statement nor clashes with it. A
    negation, opposite or swapped comparison between the statement and the claim, or the
    claim negating one of the statement's words ("brings no additional training cost"
    answers "Does it add training cost?"), says no."""
    statement = _AUXILIARY.sub("", question.asked).rstrip("?")
    if problems(statement, claim, POLARITY_CHECKS):
        return False
    asked = {term.stem for term in analyse(statement).terms if not term.near_negation}
    terms = analyse(claim).terms
    if any(term.stem in asked and term.near_negation for term in terms):
        return False
    shared = asked & {term.stem for term in terms}
    return True if len(shared) >= RESTATING_SHARE * max(len(asked), 1) else None
