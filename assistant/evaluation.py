"""Score answers on a shipped question set: retrieval, faithfulness, citations, correctness
and refusals, for each backend and for a llama-index baseline, overall and per question type.

Faithfulness follows RAGAS (a sentence counts when the context its answer cites supports
it); citation recall and precision follow ALCE (Gao et al., 2023). Both ask a `Judge`
whether a passage supports a claim: `LocalJudge` (offline, deterministic) by default, or
`LLMJudge`, an OpenAI-compatible model that splits each claim into atomic statements and
checks each one. The backend's raw output (before grounding) is scored like the final
answer, so what grounding removes or repairs shows as the difference."""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, astuple, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

import httpx
import openai
import tomllib
from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from pydantic import BaseModel, Field, PrivateAttr

from .answer import Answer
from .assistant import Assistant
from .backends.base import GenerationRequest
from .backends.openai_compat import KEYLESS, ApiEndpoint
from .embeddings import Embedder
from .errors import BackendError, SettingsError
from .grounding import split_claims
from .prompts import render
from .settings import ChromaSettings, LLMSettings, Settings
from .support import SupportScorer

RETRIEVAL_K = 5
BACKEND, BASELINE = "backend", "baseline"

Pair = tuple[str, str]
"""A (claim, passage) pair put to a judge."""

Progress = Callable[[str, int, int], None]
"""Called as `(system, questions done, questions in all)` after each answer."""


# ---- the question set ---------------------------------------------------------------------


class EvalQuestion(BaseModel):
    """One row of `eval/questions.jsonl`.

    `key_facts` lists the facts a correct answer states, each as its acceptable wordings."""

    id: str
    type: str
    question: str
    history: list[dict[str, str]] = Field(default_factory=list)
    gold_papers: list[str] = Field(default_factory=list)
    key_facts: list[list[str]] = Field(default_factory=list)
    answerable: bool


class JudgePair(BaseModel):
    """One row of `eval/judge_pairs.jsonl`: does `passage` support `claim`?"""

    id: str
    claim: str
    passage: str
    supported: bool
    kind: str = ""


def load_questions(path: Path) -> list[EvalQuestion]:
    """The questions of a JSONL file, validated."""
    return [EvalQuestion.model_validate_json(line) for line in _lines(path)]


def load_judge_pairs(path: Path) -> list[JudgePair]:
    """The labelled claim/passage pairs of a JSONL file, validated."""
    return [JudgePair.model_validate_json(line) for line in _lines(path)]


def _lines(path: Path) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from None
    return [line for line in text.splitlines() if line.strip()]


# ---- judges -------------------------------------------------------------------------------


class Judge(Protocol):
    """Decides whether passages support claims."""

    name: str

    def supports(self, pairs: list[Pair]) -> list[bool]:
        """One verdict per `(claim, passage)` pair, in order."""
        ...


class LocalJudge:
    """citeqa's own offline entailment scorer (`SupportScorer`): deterministic and free."""

    name = "local"

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.scorer = SupportScorer(embedder)

    def supports(self, pairs: list[Pair]) -> list[bool]:
        return [verdict.supported for verdict in self.scorer.check_many(pairs)]


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_VERDICT = re.compile(r"^\s*(\d+)\s*[:.)-]\s*(yes|no)\b", re.IGNORECASE | re.MULTILINE)


class LLMJudge:
    """An OpenAI-compatible model as judge, RAGAS-style: the claim is split into atomic
    statements (`prompts/judge_decompose.txt`), then all of them are checked against the
    passage in one call (`prompts/judge_verify.txt`). Supported when every statement is."""

    name = "llm"

    def __init__(self, endpoint: ApiEndpoint, max_tokens: int = 256) -> None:
        self.endpoint = endpoint
        self.max_tokens = max_tokens
        self._client = endpoint.client()
        self._statements: dict[str, list[str]] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMJudge:
        """The judge configured in `[judge]`, each unset field taken from `[llm]`."""
        judge, llm = settings.judge, settings.llm
        endpoint = ApiEndpoint(
            base_url=judge.base_url or llm.base_url,
            api_key=judge.api_key or llm.api_key,
            model=judge.model or llm.model,
            timeout=llm.timeout,
            max_retries=llm.max_retries,
        )
        return cls(endpoint)

    def supports(self, pairs: list[Pair]) -> list[bool]:
        return [self._verify(claim, passage) for claim, passage in pairs]

    def statements(self, claim: str) -> list[str]:
        """The atomic statements of `claim` (asked once per claim)."""
        if claim not in self._statements:
            reply = self._complete(render("judge_decompose", claim=claim))
            lines = (_BULLET.sub("", line).strip() for line in reply.splitlines())
            self._statements[claim] = [line for line in lines if line] or [claim]
        return self._statements[claim]

    def _verify(self, claim: str, passage: str) -> bool:
        statements = self.statements(claim)
        listing = "\n".join(f"{n}. {text}" for n, text in enumerate(statements, start=1))
        reply = self._complete(render("judge_verify", passage=passage, statements=listing))
        verdicts = {int(m.group(1)): m.group(2).lower() == "yes" for m in _VERDICT.finditer(reply)}
        return all(verdicts.get(n, False) for n in range(1, len(statements) + 1))

    def _complete(self, prompt: str) -> str:
        endpoint = self.endpoint
        try:
            response = self._client.chat.completions.create(
                model=endpoint.model,
                messages=[{"role": "user", "content": prompt}],
                temperature=0.0,
                max_tokens=self.max_tokens,
            )
            content = response.choices[0].message.content
        except (openai.OpenAIError, httpx.HTTPError, ValueError, IndexError) as exc:
            raise endpoint.error(exc) from None
        if not content or not content.strip():
            raise BackendError(f"judge model '{endpoint.model}' at {endpoint.url} said nothing")
        return content


def make_judge(name: str, settings: Settings, embedder: Embedder | None = None) -> Judge:
    """The judge called `name`: `local` or `llm`."""
    if name == "local":
        return LocalJudge(embedder)
    if name == "llm":
        return LLMJudge.from_settings(settings)
    raise SettingsError(f"unknown judge {name!r}; choose local or llm")


@dataclass(frozen=True)
class JudgeQuality:
    """How often a judge agrees with labelled pairs; balanced accuracy is the mean of the
    true positive and true negative rates, so the class balance does not flatter it."""

    balanced_accuracy: float
    true_positive_rate: float
    true_negative_rate: float
    pairs: int


def judge_quality(judge: Judge, pairs: Sequence[JudgePair]) -> JudgeQuality:
    """Measure `judge` on labelled pairs (e.g. `eval/judge_pairs.jsonl`)."""
    verdicts = judge.supports([(pair.claim, pair.passage) for pair in pairs])
    hits = {True: [], False: []}
    for pair, verdict in zip(pairs, verdicts, strict=True):
        hits[pair.supported].append(verdict == pair.supported)
    if not hits[True] or not hits[False]:
        raise ValueError("judge quality needs both supported and unsupported pairs")
    positive, negative = (sum(hits[label]) / len(hits[label]) for label in (True, False))
    return JudgeQuality((positive + negative) / 2, positive, negative, len(pairs))


# ---- what is scored -------------------------------------------------------------------------


@dataclass(frozen=True)
class CitedSentence:
    """A sentence and the texts it cites (snippets, or whole passages for raw output)."""

    text: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Response:
    """One system's answer to one question, reduced to what is scored.

    `papers` are the retrieved papers, best first; `fell_back` says the answer came from
    the extractive fallback instead of the backend asked."""

    answer: str
    refused: bool
    sentences: tuple[CitedSentence, ...]
    raw_sentences: tuple[CitedSentence, ...]
    papers: tuple[str, ...]
    fell_back: bool = False

    @property
    def text(self) -> str:
        """The answer's sentences without citation markers."""
        return " ".join(sentence.text for sentence in self.sentences)


def response_from_answer(answer: Answer) -> Response:
    """Score an `Answer`: its verified sentences, and its raw text split into cited claims
    (the numbers then point at the retrieved passages)."""
    snippets = {citation.n: citation.snippet for citation in answer.citations}
    sentences = () if answer.refused else answer.sentences
    return Response(
        answer=answer.answer,
        refused=answer.refused,
        sentences=tuple(
            CitedSentence(sentence.text, tuple(snippets[n] for n in sentence.citations))
            for sentence in sentences
        ),
        raw_sentences=cited_claims(answer.raw_answer, [hit.text for hit in answer.sources]),
        papers=tuple(dict.fromkeys(hit.paper_id for hit in answer.sources)),
        fell_back=answer.note is not None,
    )


def cited_claims(text: str, passages: Sequence[str]) -> tuple[CitedSentence, ...]:
    """The sentences of generated `text`, each with the passages its `[n]` markers name."""
    claims, _, _ = split_claims(text, len(passages))
    return tuple(
        CitedSentence(claim.text, tuple(passages[i] for i in claim.cited)) for claim in claims
    )


# ---- scoring ------------------------------------------------------------------------------


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


def key_fact_recall(question: EvalQuestion, response: Response) -> float | None:
    """The share of the key facts found (any acceptable wording, ignoring case) in the
    answer; 0 for a refused answerable question, None for an unanswerable one."""
    if not question.answerable or not question.key_facts:
        return None
    if response.refused:
        return 0.0
    text = response.text.casefold()
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
    )


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


# ---- running ------------------------------------------------------------------------------


@dataclass
class SystemResult:
    """One backend's (or the baseline's) answers and scores; `seconds` is answering time."""

    name: str
    kind: str
    responses: list[Response]
    scores: list[QuestionScore]
    seconds: float

    @property
    def metrics(self) -> Metrics:
        return aggregate(self.scores)

    def by_type(self) -> dict[str, Metrics]:
        """The metrics of each question type, in order of first appearance."""
        types = dict.fromkeys(score.type for score in self.scores)
        return {kind: aggregate([s for s in self.scores if s.type == kind]) for kind in types}


@dataclass
class EvalReport:
    """Everything one evaluation run measured."""

    questions_file: str
    judge: str
    systems: list[SystemResult]
    judge_quality: JudgeQuality | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def system(self, name: str) -> SystemResult:
        return next(system for system in self.systems if system.name == name)

    def to_json(self) -> dict[str, Any]:
        return {
            "questions_file": self.questions_file,
            "judge": self.judge,
            "judge_quality": asdict(self.judge_quality) if self.judge_quality else None,
            "settings": self.settings,
            "systems": [_system_json(system) for system in self.systems],
        }


def _system_json(system: SystemResult) -> dict[str, Any]:
    return {
        "name": system.name,
        "kind": system.kind,
        "seconds": round(system.seconds, 2),
        "metrics": asdict(system.metrics),
        "by_type": {kind: asdict(metrics) for kind, metrics in system.by_type().items()},
        "questions": [
            {**asdict(score), "answer": response.answer, "papers": list(response.papers)}
            for score, response in zip(system.scores, system.responses, strict=True)
        ],
    }


def evaluate(
    assistant: Assistant,
    questions: Sequence[EvalQuestion],
    backends: Sequence[str],
    *,
    judge: Judge | None = None,
    baseline: bool = True,
    judge_pairs: Sequence[JudgePair] = (),
    on_progress: Progress | None = None,
    questions_file: str = "",
) -> EvalReport:
    """Answer `questions` with each backend (and, with `baseline`, with llama-index's
    `CitationQueryEngine` on the same LLM) and score every answer with `judge` (default:
    `LocalJudge`). With `judge_pairs`, the judge's own quality is measured too."""
    judge = judge or LocalJudge(assistant.answerer.scoring_embedder)
    assistant.ensure_index()
    systems = [
        _run(name, BACKEND, questions, _backend_answerer(assistant, name), judge, on_progress)
        for name in backends
    ]
    if baseline:
        for llm in dict.fromkeys(baseline_llm(name) for name in backends):
            answer = CitationBaseline(assistant, llm).answer
            systems.append(_run(f"baseline-{llm}", BASELINE, questions, answer, judge, on_progress))
    return EvalReport(
        questions_file=questions_file,
        judge=judge.name,
        systems=systems,
        judge_quality=judge_quality(judge, judge_pairs) if judge_pairs else None,
        settings={
            "retrieval": assistant.settings.retrieval.model_dump(),
            "answer": assistant.settings.answer.model_dump(),
        },
    )


def _backend_answerer(assistant: Assistant, backend: str) -> Callable[[EvalQuestion], Response]:
    def answer(question: EvalQuestion) -> Response:
        reply = assistant.ask(question.question, question.history or None, backend=backend)
        return response_from_answer(reply)

    return answer


def _run(
    name: str,
    kind: str,
    questions: Sequence[EvalQuestion],
    answer: Callable[[EvalQuestion], Response],
    judge: Judge,
    on_progress: Progress | None,
) -> SystemResult:
    started = time.perf_counter()
    responses = []
    for done, question in enumerate(questions, start=1):
        responses.append(answer(question))
        if on_progress:
            on_progress(name, done, len(questions))
    seconds = time.perf_counter() - started
    return SystemResult(
        name, kind, responses, score_responses(questions, responses, judge), seconds
    )


@contextmanager
def eval_assistant(settings: Settings) -> Iterator[Assistant]:
    """An `Assistant` over the configured index or, when that is empty, over a private
    temporary index of the shipped seeds, so an evaluation never fills the user's index."""
    assistant = Assistant(settings)
    if not assistant.index.is_empty():
        yield assistant
        return
    with tempfile.TemporaryDirectory(prefix="citeqa-eval-") as folder:
        update = {"data_dir": Path(folder), "chroma": ChromaSettings()}
        yield Assistant(settings.model_copy(update=update))


# ---- the llama-index baseline ----------------------------------------------------------------


def baseline_llm(backend: str) -> str:
    """The LLM the baseline uses next to `backend`: the API for `openai`, else the local
    model (the extractive backend has no LLM)."""
    return "openai" if backend == "openai" else "local"


class BackendLLM(CustomLLM):
    """A citeqa `Backend` as a llama-index completion LLM: each prompt is sent as one
    user message."""

    backend: Any = Field(description="the citeqa Backend that generates")
    context_window: int = 4096
    max_tokens: int = 200
    temperature: float = 0.0

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.max_tokens,
            model_name=self.backend.name,
        )

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="".join(self._generate(prompt)))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = ""
        for piece in self._generate(prompt):
            text += piece
            yield CompletionResponse(text=text, delta=piece)

    def _generate(self, prompt: str) -> Iterator[str]:
        request = GenerationRequest(
            question=prompt,
            sources=[],
            messages=[{"role": "user", "content": prompt}],
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )
        return self.backend.generate(request)


class EmbedderAdapter(BaseEmbedding):
    """A citeqa `Embedder` (by default the ONNX MiniLM) as a llama-index embedding model."""

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder, **kwargs: Any) -> None:
        super().__init__(model_name=embedder.name, **kwargs)
        self._embedder = embedder

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vectors([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vectors([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._vectors(texts)

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed(texts).tolist()


_SOURCE_LABEL = re.compile(r"^Source \d+:\n")


class CitationBaseline:
    """llama-index's `CitationQueryEngine` with a dense-only `VectorStoreIndex` of the same
    chunks, the same embedder and the same LLM; a follow-up gets the same standalone
    rewrite as citeqa's own chain."""

    def __init__(self, assistant: Assistant, llm: str) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.query_engine import CitationQueryEngine

        self.assistant = assistant
        self.llm = llm
        index = VectorStoreIndex(
            _nodes(assistant), embed_model=EmbedderAdapter(assistant.index.embedder)
        )
        self.engine = CitationQueryEngine.from_args(
            index, llm=self._llm(), similarity_top_k=assistant.settings.retrieval.k
        )

    def _llm(self) -> Any:
        settings = self.assistant.settings.llm
        if self.llm == "openai":
            return _openai_like(settings)
        return BackendLLM(
            backend=self.assistant.answerer.backend("local"),
            context_window=settings.context_tokens,
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
        )

    def answer(self, question: EvalQuestion) -> Response:
        """The baseline's answer, scored as is: it has no grounding, so raw = final."""
        standalone = self.assistant.answerer.standalone_question(
            question.question, question.history, self.llm
        )
        result = self.engine.query(standalone)
        passages = [
            _SOURCE_LABEL.sub("", node.node.get_content()).strip() for node in result.source_nodes
        ]
        claims = cited_claims(str(result.response or ""), passages)
        return Response(
            answer=str(result.response or ""),
            refused=not claims,
            sentences=claims,
            raw_sentences=claims,
            papers=tuple(
                dict.fromkeys(node.node.metadata["paper_id"] for node in result.source_nodes)
            ),
        )


def _nodes(assistant: Assistant) -> list[Any]:
    """The index's chunks as llama-index nodes; the title is embedded with the chunk, as in
    citeqa's own dense index, but not shown to the LLM."""
    from llama_index.core.schema import TextNode

    snapshot = assistant.index.snapshot()
    return [
        TextNode(
            id_=chunk_id,
            text=text,
            metadata={"paper_id": metadata["paper_id"], "title": metadata.get("title") or ""},
            excluded_embed_metadata_keys=["paper_id"],
            excluded_llm_metadata_keys=["paper_id", "title"],
        )
        for chunk_id, text, metadata in zip(
            snapshot.chunk_ids, snapshot.chunk_texts, snapshot.chunk_metadata, strict=True
        )
    ]


def _openai_like(settings: LLMSettings) -> Any:
    try:
        from llama_index.llms.openai_like import OpenAILike
    except ImportError:
        raise SettingsError(
            "the openai baseline needs `pip install llama-index-llms-openai-like`; "
            "or pass --no-baseline"
        ) from None
    endpoint = ApiEndpoint(
        settings.base_url, settings.api_key, settings.model, settings.timeout, settings.max_retries
    )
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    return OpenAILike(
        model=settings.model,
        api_base=endpoint.url,
        api_key=key or KEYLESS,
        is_chat_model=True,
        context_window=settings.context_tokens,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
    )


# ---- thresholds and the gate -------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The minimum each gated backend must reach on each metric."""

    backends: tuple[str, ...]
    minimum: dict[str, float]


def load_thresholds(path: Path) -> Thresholds:
    """Read `eval/thresholds.toml`: `backends = [...]` and a `[minimum]` table."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"cannot read the thresholds file {path}: {exc}") from None
    minimum = {name: float(value) for name, value in data.get("minimum", {}).items()}
    unknown = sorted(set(minimum) - set(METRIC_NAMES))
    if unknown:
        raise SettingsError(f"{path}: unknown metric(s) {', '.join(unknown)}")
    return Thresholds(tuple(data.get("backends", ())), minimum)


def gate_failures(report: EvalReport, thresholds: Thresholds) -> list[str]:
    """One line per gated backend metric below its minimum (or not measured at all)."""
    failures = []
    for system in report.systems:
        if system.kind != BACKEND or system.name not in thresholds.backends:
            continue
        metrics = asdict(system.metrics)
        for metric, minimum in thresholds.minimum.items():
            value = metrics[metric]
            if value is None or value < minimum:
                failures.append(f"{system.name}: {metric} {_cell(value)} < {minimum:g}")
    return failures


# ---- reports ------------------------------------------------------------------------------

PLOTTED = (
    "faithfulness",
    "raw_faithfulness",
    "citation_recall",
    "citation_precision",
    "key_fact_recall",
    "retrieval_recall_at_5",
)

Table = tuple[list[str], list[list[str]]]


def overall_table(report: EvalReport, thresholds: Thresholds | None = None) -> Table:
    """Rows of metrics, a column per system (and the threshold, when given)."""
    header = ["metric", *(["minimum"] if thresholds else []), *(s.name for s in report.systems)]
    metrics = [asdict(system.metrics) for system in report.systems]
    rows = [
        [
            name,
            *([_cell(thresholds.minimum.get(name))] if thresholds else []),
            *(_cell(values[name]) for values in metrics),
        ]
        for name in METRIC_NAMES
    ]
    seconds = [_cell(s.seconds / max(len(s.scores), 1)) for s in report.systems]
    rows.append(["seconds_per_question", *([""] if thresholds else []), *seconds])
    return header, rows


def type_table(system: SystemResult) -> Table:
    """Rows of metrics, a column for all questions and one per question type."""
    columns = {"all": system.metrics, **system.by_type()}
    values = {kind: asdict(metrics) for kind, metrics in columns.items()}
    return ["metric", *columns], [
        [name, *(_cell(values[kind][name]) for kind in columns)] for name in METRIC_NAMES
    ]


def _cell(value: float | int | None) -> str:
    if value is None:
        return "–"
    return str(value) if isinstance(value, int) else f"{value:.3f}"


def write_reports(
    report: EvalReport, folder: Path, name: str, thresholds: Thresholds | None = None
) -> list[Path]:
    """Write `<name>.json` (everything), `<name>.md` (summary) and `<name>.png` (per-type
    scores per system) into `folder`; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.{suffix}" for suffix in ("json", "md", "png")]
    data = report.to_json()
    if thresholds:
        data["gate"] = {
            "minimum": thresholds.minimum,
            "failures": gate_failures(report, thresholds),
        }
    paths[0].write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(report, name, thresholds), encoding="utf-8")
    plot(report, paths[2])
    return paths


def markdown(report: EvalReport, name: str, thresholds: Thresholds | None = None) -> str:
    """The report as Markdown: setup, overall table, gate result, one table per system."""
    quality = report.judge_quality
    judged = (
        f" (balanced accuracy {quality.balanced_accuracy:.3f} on {quality.pairs} labelled pairs)"
        if quality
        else ""
    )
    count = len(report.systems[0].scores) if report.systems else 0
    lines = [
        f"# citeqa evaluation: {name}",
        "",
        f"{count} questions from `{report.questions_file}`; judge: {report.judge}{judged}.",
        "",
        "## Overall",
        "",
        *_markdown_table(overall_table(report, thresholds)),
    ]
    if thresholds:
        failures = gate_failures(report, thresholds)
        lines += ["", "Gate: " + ("passed." if not failures else "failed:"), ""]
        lines += [f"- {failure}" for failure in failures]
    for system in report.systems:
        lines += [
            "",
            f"## {system.name} by question type",
            "",
            *_markdown_table(type_table(system)),
        ]
    return "\n".join(lines).rstrip() + "\n"


def _markdown_table(table: Table) -> list[str]:
    header, rows = table
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def plot(report: EvalReport, path: Path) -> None:
    """A bar chart per metric in `PLOTTED`: question types along x, one bar per system."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(15, 8.5), layout="constrained")
    FigureCanvasAgg(figure)
    by_type = {system.name: system.by_type() for system in report.systems}
    types = list(dict.fromkeys(kind for table in by_type.values() for kind in table))
    x = np.arange(len(types))
    width = 0.8 / max(len(by_type), 1)
    for axes, metric in zip(figure.subplots(2, 3).flat, PLOTTED, strict=True):
        for position, (system, table) in enumerate(by_type.items()):
            values = [getattr(table[kind], metric) if kind in table else None for kind in types]
            heights = [np.nan if value is None else value for value in values]
            axes.bar(x + (position - (len(by_type) - 1) / 2) * width, heights, width, label=system)
        axes.set_title(metric)
        axes.set_xticks(x, types, rotation=35, ha="right")
        axes.set_ylim(0, 1.05)
    figure.axes[0].legend(loc="lower left", fontsize="small")
    figure.savefig(path, dpi=100)
