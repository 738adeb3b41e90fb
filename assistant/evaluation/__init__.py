"""Score answers on shipped question sets: retrieval, faithfulness, citations, correctness
and refusals, for each backend and for a llama-index baseline, overall and per question
type; and the verifier on labelled generated answers. One module per concern:

- `dataset`: the question set, the judge pairs, the labelled answers;
- `judges`: who decides support (local or LLM) and how well it agrees with labels;
- `metrics`: what an answer is reduced to and how it is scored;
- `run`: answering every question with every system;
- `verifier`: the verifier on labelled answers;
- `baseline`: llama-index's `CitationQueryEngine` on the same parts;
- `gate`, `report`: the CI gate, and tables, Markdown, JSON and a chart.
"""

from .baseline import BackendLLM, CitationBaseline, EmbedderAdapter, baseline_llm
from .dataset import (
    AnswerSetQuestion,
    EvalQuestion,
    JudgePair,
    load_answer_set,
    load_judge_pairs,
    load_questions,
)
from .gate import Thresholds, gate_failures, load_thresholds
from .judges import Judge, JudgeQuality, LLMJudge, LocalJudge, Pair, judge_quality, make_judge
from .metrics import (
    METRIC_NAMES,
    CitedSentence,
    Metrics,
    QuestionScore,
    Response,
    aggregate,
    key_fact_recall,
    response_from_answer,
    retrieval_scores,
    score_responses,
)
from .report import markdown, overall_table, plot, type_table, verifier_table, write_reports
from .run import EvalReport, SystemResult, eval_assistant, evaluate
from .verifier import VerifierReport, evaluate_verifier

__all__ = [
    "METRIC_NAMES",
    "AnswerSetQuestion",
    "BackendLLM",
    "CitationBaseline",
    "CitedSentence",
    "EmbedderAdapter",
    "EvalQuestion",
    "EvalReport",
    "Judge",
    "JudgePair",
    "JudgeQuality",
    "LLMJudge",
    "LocalJudge",
    "Metrics",
    "Pair",
    "QuestionScore",
    "Response",
    "SystemResult",
    "Thresholds",
    "VerifierReport",
    "aggregate",
    "baseline_llm",
    "eval_assistant",
    "evaluate",
    "evaluate_verifier",
    "gate_failures",
    "judge_quality",
    "key_fact_recall",
    "load_answer_set",
    "load_judge_pairs",
    "load_questions",
    "load_thresholds",
    "make_judge",
    "markdown",
    "overall_table",
    "plot",
    "response_from_answer",
    "retrieval_scores",
    "score_responses",
    "type_table",
    "verifier_table",
    "write_reports",
]
