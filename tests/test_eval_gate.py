"""The CI gate: every gated backend meets eval/thresholds.toml on the shipped question set.

One evaluation (no baseline) is run for the whole module, within the 10-minute budget."""

from __future__ import annotations

import pytest
from conftest import EVAL

from assistant import Assistant
from assistant.evaluation import EvalReport, evaluate, load_questions, load_thresholds

THRESHOLDS = load_thresholds(EVAL / "thresholds.toml")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(assistant: Assistant) -> EvalReport:
    questions = load_questions(EVAL / "questions.jsonl")
    return evaluate(assistant, questions, THRESHOLDS.backends, baseline=False)


# The first test builds the module's report, so its limit is the whole evaluation's budget.
@pytest.mark.timeout(1500)
@pytest.mark.parametrize(
    ("backend", "metric"),
    [(backend, metric) for backend in THRESHOLDS.backends for metric in THRESHOLDS.minimum],
)
def test_backend_meets_the_threshold(report: EvalReport, backend: str, metric: str) -> None:
    value = getattr(report.system(backend).metrics, metric)
    minimum = THRESHOLDS.minimum[metric]
    assert value is not None and value >= minimum, f"{backend}: {metric} {value} < {minimum}"
