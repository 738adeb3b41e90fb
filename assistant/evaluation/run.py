"""Running an evaluation: each backend (and the baseline) answers every question, a judge
scores the answers, and the verifier is measured on the labelled answers."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..assistant import Assistant
from ..settings import ChromaSettings, Settings
from .baseline import CitationBaseline, baseline_llm
from .dataset import AnswerSetQuestion, EvalQuestion, JudgePair
from .gate import BACKEND
from .judges import Judge, JudgeQuality, LocalJudge, judge_quality
from .metrics import (
    Metrics,
    QuestionScore,
    Response,
    aggregate,
    response_from_answer,
    score_responses,
)
from .verifier import VerifierReport, evaluate_verifier

BASELINE = "baseline"

Progress = Callable[[str, int, int], None]
"""Called as `(system, questions done, questions in all)` after each answer."""


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
    verifier: VerifierReport | None = None

    def system(self, name: str) -> SystemResult:
        return next(system for system in self.systems if system.name == name)

    def to_json(self) -> dict[str, Any]:
        return {
            "questions_file": self.questions_file,
            "judge": self.judge,
            "judge_quality": asdict(self.judge_quality) if self.judge_quality else None,
            "settings": self.settings,
            "systems": [_system_json(system) for system in self.systems],
            "verifier": self.verifier.to_json() if self.verifier else None,
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
    answer_set: Sequence[AnswerSetQuestion] = (),
    on_progress: Progress | None = None,
    questions_file: str = "",
    answers_file: str = "",
) -> EvalReport:
    """Answer `questions` with each backend (and, with `baseline`, with llama-index's
    `CitationQueryEngine` on the same LLM) and score every answer with `judge` (default:
    `LocalJudge`). With `judge_pairs`, the judge's own quality is measured too; with
    `answer_set`, the verifier's."""
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
        verifier=evaluate_verifier(assistant, answer_set, answers_file) if answer_set else None,
        settings={
            "retrieval": assistant.settings.retrieval.model_dump(),
            "answer": assistant.settings.answer.model_dump(),
        },
    )


def _backend_answerer(assistant: Assistant, backend: str) -> Callable[[EvalQuestion], Response]:
    def answer(question: EvalQuestion) -> Response:
        reply = assistant.ask(question.question, question.history or None, backend=backend)
        papers = assistant.index.snapshot().papers
        abstracts = {
            hit.paper_id: papers[hit.paper_id].abstract
            for hit in reply.sources
            if hit.paper_id in papers
        }
        return response_from_answer(reply, abstracts)

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
