"""The CI gate: every gated backend meets eval/thresholds.toml on the shipped question set
(the local model on every third question), and the verifier on the held-out labelled
answers. One evaluation is run for the whole module."""

from __future__ import annotations

import pytest
from conftest import EVAL

from assistant import Assistant
from assistant.evaluation import (
    EvalReport,
    VerifierReport,
    evaluate,
    evaluate_verifier,
    load_answer_set,
    load_questions,
    load_thresholds,
)

THRESHOLDS = load_thresholds(EVAL / "thresholds.toml")
LOCAL_SAMPLE = 3  # every third question

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reports(assistant: Assistant) -> dict[str, EvalReport]:
    questions = load_questions(EVAL / "questions.jsonl")
    return {
        backend: evaluate(
            assistant,
            questions[::LOCAL_SAMPLE] if backend == "local" else questions,
            [backend],
            baseline=False,
        )
        for backend in THRESHOLDS.backends
    }


@pytest.fixture(scope="module")
def verifier(assistant: Assistant) -> VerifierReport:
    return evaluate_verifier(assistant, load_answer_set(EVAL / "answers_test4.jsonl"))


# The first test builds the module's reports, so its limit is the whole evaluation's budget.
@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    ("backend", "metric"),
    [(backend, metric) for backend in THRESHOLDS.backends for metric in THRESHOLDS.minimum],
)
def test_backend_meets_the_threshold(
    reports: dict[str, EvalReport], backend: str, metric: str
) -> None:
    value = getattr(reports[backend].system(backend).metrics, metric)
    minimum = THRESHOLDS.minimum[metric]
    assert value is not None and value >= minimum, f"{backend}: {metric} {value} < {minimum}"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("metric", list(THRESHOLDS.verifier))
def test_the_verifier_meets_the_threshold(verifier: VerifierReport, metric: str) -> None:
    value = verifier.metrics()[metric]
    minimum = THRESHOLDS.verifier[metric]
    assert value is not None and value >= minimum, f"verifier: {metric} {value} < {minimum}"
