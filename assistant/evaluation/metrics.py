"""Metrics: what an answer is reduced to (`Response`), and how it is scored.

Faithfulness follows RAGAS (a sentence counts when the context its answer cites supports
it); citation recall and precision follow ALCE (Gao et al., 2023). The backend's raw output
(before verification) is scored like the final answer, so what verification removes or
repairs shows as the difference. Correctness is key-fact recall; refusals are scored on
refusal precision and recall, never as NaN; the citations are also checked against the
gold papers."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields

from ..answer import Answer
from ..answering.claims import read_draft
from .dataset import EvalQuestion
from .judges import Judge, Pair

RETRIEVAL_K = 5
_MARKERS = re.compile(r"\s*\[\d+\]")


@dataclass(frozen=True)
class CitedSentence:
    """A sentence and the texts it cites (snippets, or whole abstracts for raw output), and
    the papers those are from."""

    text: str
    evidence: tuple[str, ...]
    papers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Response:
    """One system's answer to one question, reduced to what is scored.

    `papers` are the retrieved papers, best first; `text` what the reader sees, without
    citation markers, followed by the sentences as the abstracts write them (key facts are
    copied from abstracts, LaTeX included, and the reader sees it rendered); `fell_back`
    says the answer came from the extractive fallback instead of the backend asked."""

    answer: str
    refused: bool
    sentences: tuple[CitedSentence, ...]
    raw_sentences: tuple[CitedSentence, ...]
    papers: tuple[str, ...]
    fell_back: bool = False
    text: str = ""
    list_like: bool = False

    @property
    def cited_papers(self) -> list[str]:
        """The paper of each citation, one entry per citation of each sentence."""
        return [paper for sentence in self.sentences for paper in sentence.papers]


def response_from_answer(answer: Answer, abstracts: Mapping[str, str] | None = None) -> Response:
    """Score an `Answer`: its verified claims (framing is true by construction and not
    scored), and its raw text split into cited claims whose numbers point at the retrieved
    papers' abstracts, in retrieval order."""
    by_number = {citation.n: citation for citation in answer.citations}
    claims = [] if answer.refused else [s for s in answer.sentences if s.kind == "claim"]
    order = list(dict.fromkeys(hit.paper_id for hit in answer.sources))
    return Response(
        answer=answer.answer,
        refused=answer.refused,
        sentences=tuple(
            CitedSentence(
                sentence.text,
                tuple(by_number[n].snippet for n in sentence.citations),
                tuple(by_number[n].paper_id for n in sentence.citations),
            )
            for sentence in claims
        ),
        raw_sentences=cited_claims(
            answer.raw_answer, [(abstracts or {}).get(paper, "") for paper in order], order
        ),
        papers=tuple(order),
        fell_back=answer.note is not None,
        text="\n".join([_MARKERS.sub("", answer.answer), *(s.text for s in answer.sentences)]),
        list_like=any(sentence.heading for sentence in answer.sentences),
    )


def cited_claims(
    text: str, passages: Sequence[str], papers: Sequence[str] = ()
) -> tuple[CitedSentence, ...]:
    """The sentences of generated `text`, each with the passages its `[n]` markers name."""
    draft = read_draft(text, len(passages))
    return tuple(
        CitedSentence(
            sentence.text,
            tuple(passages[i] for i in sentence.cited),
            tuple(papers[i] for i in sentence.cited if i < len(papers)),
        )
        for sentence in draft.sentences
        if not sentence.opener
    )


@dataclass(frozen=True)
class SentenceCounts:
    """Counts over sentences: how many, how many the answer's cited context supports
    (faithful), how many their own citations support (ALCE recall), and how many of their
    citations are not irrelevant (ALCE precision)."""

    sentences: int = 0
    faithful: int = 0
    cited_supported: int = 0
    citations: int = 0
    precise_citations: int = 0

    def __add__(self, other: SentenceCounts) -> SentenceCounts:
        return SentenceCounts(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


@dataclass(frozen=True)
class _Checks:
    """The judge calls that score one sentence; all empty when it cites nothing."""

    faithful: Pair | None = None
    joint: Pair | None = None
    alone: tuple[Pair, ...] = ()
    rest: tuple[Pair, ...] = ()
    citations: int = 0

    @classmethod
    def of(cls, sentence: CitedSentence, context: str) -> _Checks:
        text, evidence = sentence.text, sentence.evidence
        if not evidence:
            return cls()
        several = len(evidence) > 1
        others = [evidence[:i] + evidence[i + 1 :] for i in range(len(evidence))]
        return cls(
            faithful=(text, context),
            joint=(text, _join(evidence)),
            alone=tuple((text, one) for one in evidence) if several else (),
            rest=tuple((text, _join(other)) for other in others) if several else (),
            citations=len(evidence),
        )

    def pairs(self) -> list[Pair]:
        return [pair for pair in (self.faithful, self.joint) if pair] + [*self.alone, *self.rest]

    def count(self, verdicts: Mapping[Pair, bool]) -> SentenceCounts:
        if self.faithful is None or self.joint is None:
            return SentenceCounts(sentences=1)
        joint = verdicts[self.joint]
        if not joint:
            precise = 0  # as in ALCE: citations of an unsupported sentence are not precise
        elif not self.alone:
            precise = self.citations
        else:
            precise = sum(
                verdicts[alone] or not verdicts[rest]
                for alone, rest in zip(self.alone, self.rest, strict=True)
            )
        return SentenceCounts(1, int(verdicts[self.faithful]), int(joint), self.citations, precise)


def _join(texts: Iterable[str]) -> str:
    return " ".join(texts)


def _checks(sentences: Sequence[CitedSentence]) -> list[_Checks]:
    """Checks for each sentence; its answer's cited context is everything the answer cites."""
    context = _join(dict.fromkeys(text for sentence in sentences for text in sentence.evidence))
    return [_Checks.of(sentence, context) for sentence in sentences]


def _counts(checks: list[_Checks], verdicts: Mapping[Pair, bool]) -> SentenceCounts:
    return sum((check.count(verdicts) for check in checks), SentenceCounts())


@dataclass(frozen=True)
class QuestionScore:
    """The scores of one answer; None where a score does not apply to the question."""

    id: str
    type: str
    answerable: bool
    refused: bool
    fell_back: bool
    final: SentenceCounts
    raw: SentenceCounts
    key_fact_recall: float | None
    retrieval_recall: float | None
    reciprocal_rank: float | None
    gold_cited: bool | None = None
    gold_citations: tuple[int, int] | None = None
    claims: int = 0
    list_like: bool = False


def key_fact_recall(question: EvalQuestion, response: Response) -> float | None:
    """The share of the key facts found (any acceptable wording, ignoring case) in the
    answer; 0 for a refused answerable question, None for an unanswerable one."""
    if not question.answerable or not question.key_facts:
        return None
    if response.refused:
        return 0.0
    text = (response.text or response.answer).casefold()
    found = sum(any(option.casefold() in text for option in fact) for fact in question.key_facts)
    return found / len(question.key_facts)


def retrieval_scores(
    gold: Sequence[str], papers: Sequence[str], k: int = RETRIEVAL_K
) -> tuple[float | None, float | None]:
    """Paper-level recall@k and reciprocal rank of the first gold paper (None without gold)."""
    if not gold:
        return None, None
    recall = len(set(gold) & set(papers[:k])) / len(set(gold))
    rank = next((rank for rank, paper in enumerate(papers, start=1) if paper in gold), None)
    return recall, 1.0 / rank if rank else 0.0


def gold_citation_scores(
    question: EvalQuestion, response: Response
) -> tuple[bool | None, tuple[int, int] | None]:
    """Whether the answer cites a gold paper (answered questions with gold papers), and for
    a question about one paper, how many of its citations point at it, of how many."""
    if not question.answerable or not question.gold_papers or response.refused:
        return None, None
    cited = response.cited_papers
    gold = set(question.gold_papers)
    single = (sum(paper in gold for paper in cited), len(cited)) if len(gold) == 1 else None
    return bool(gold & set(cited)), single


def score_responses(
    questions: Sequence[EvalQuestion], responses: Sequence[Response], judge: Judge
) -> list[QuestionScore]:
    """Score each response; the judge sees every distinct pair once, in one batch."""
    final = [_checks(response.sentences) for response in responses]
    raw = [_checks(response.raw_sentences) for response in responses]
    pairs = list(
        dict.fromkeys(p for group in final + raw for check in group for p in check.pairs())
    )
    verdicts = dict(zip(pairs, judge.supports(pairs), strict=True))
    return [
        QuestionScore(
            question.id,
            question.type,
            question.answerable,
            response.refused,
            response.fell_back,
            _counts(final_checks, verdicts),
            _counts(raw_checks, verdicts),
            key_fact_recall(question, response),
            *retrieval_scores(question.gold_papers, response.papers),
            *gold_citation_scores(question, response),
            len(response.sentences),
            response.list_like,
        )
        for question, response, final_checks, raw_checks in zip(
            questions, responses, final, raw, strict=True
        )
    ]


@dataclass(frozen=True)
class Metrics:
    """Aggregate scores of a set of answers; None where nothing was there to measure.

    Faithfulness and citation metrics count the sentences of answered questions (a refusal
    has none); refusals score on `refusal_precision`/`refusal_recall`, and a refused
    answerable question scores 0 key-fact recall. `raw_*` score the backend's output before
    grounding; a raw sentence that cites nothing counts as unsupported."""

    questions: int
    answered: int
    refusals: int
    fallbacks: int
    retrieval_recall_at_5: float | None
    retrieval_mrr: float | None
    faithfulness: float | None
    citation_recall: float | None
    citation_precision: float | None
    sentences: int
    citations: int
    raw_faithfulness: float | None
    raw_citation_recall: float | None
    raw_citation_precision: float | None
    raw_sentences: int
    raw_citations: int
    key_fact_recall: float | None
    answer_rate: float | None
    refusal_precision: float | None
    refusal_recall: float | None
    gold_cited: float | None
    gold_citation_precision: float | None
    median_sentences: float | None


METRIC_NAMES = tuple(f.name for f in fields(Metrics))


def aggregate(scores: Sequence[QuestionScore]) -> Metrics:
    """Combine question scores: sentence metrics pooled over sentences, the others averaged
    over the questions they apply to."""
    final = sum((score.final for score in scores), SentenceCounts())
    raw = sum((score.raw for score in scores), SentenceCounts())
    answerable = [score for score in scores if score.answerable]
    unanswerable = [score for score in scores if not score.answerable]
    refused = [score for score in scores if score.refused]
    return Metrics(
        questions=len(scores),
        answered=len(scores) - len(refused),
        refusals=len(refused),
        fallbacks=sum(score.fell_back for score in scores),
        retrieval_recall_at_5=_mean(score.retrieval_recall for score in scores),
        retrieval_mrr=_mean(score.reciprocal_rank for score in scores),
        faithfulness=_ratio(final.faithful, final.sentences),
        citation_recall=_ratio(final.cited_supported, final.sentences),
        citation_precision=_ratio(final.precise_citations, final.citations),
        sentences=final.sentences,
        citations=final.citations,
        raw_faithfulness=_ratio(raw.faithful, raw.sentences),
        raw_citation_recall=_ratio(raw.cited_supported, raw.sentences),
        raw_citation_precision=_ratio(raw.precise_citations, raw.citations),
        raw_sentences=raw.sentences,
        raw_citations=raw.citations,
        key_fact_recall=_mean(score.key_fact_recall for score in scores),
        answer_rate=_ratio(sum(not score.refused for score in answerable), len(answerable)),
        refusal_precision=_ratio(sum(not score.answerable for score in refused), len(refused)),
        refusal_recall=_ratio(sum(score.refused for score in unanswerable), len(unanswerable)),
        gold_cited=_mean(
            None if score.gold_cited is None else float(score.gold_cited) for score in scores
        ),
        gold_citation_precision=_ratio(
            sum(score.gold_citations[0] for score in scores if score.gold_citations),
            sum(score.gold_citations[1] for score in scores if score.gold_citations),
        ),
        median_sentences=_median(
            score.claims for score in scores if not score.refused and not score.list_like
        ),
    )


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _median(values: Iterable[int]) -> float | None:
    present = list(values)
    return float(statistics.median(present)) if present else None


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def cell(value: float | int | None) -> str:
    """A metric value as a table shows it: '0.912', '12', or '–' when not measured."""
    if value is None:
        return "–"
    return str(value) if isinstance(value, int) else f"{value:.3f}"
