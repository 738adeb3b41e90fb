"""The bundled cross-encoders: claim/evidence entailment and how the local verifier uses it,
and the question/sentence answer model that ranks what an extractive answer quotes."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.answering.cross_encoder import (
    ANSWER_FILE,
    ENTAILMENT_FILE,
    CrossEncoder,
    answer_model,
    entailment_model,
    passage_text,
)
from assistant.answering.support import SupportScorer

EVIDENCE = (
    "We propose GaLore, a memory-efficient training strategy that allows full-parameter "
    "learning. GaLore reduces memory usage by up to 65.5% in optimizer states while "
    "maintaining both efficiency and performance for pre-training on LLaMA 1B and 7B "
    "architectures with C4 dataset with up to 19.7B tokens."
)
FAITHFUL = "GaLore cuts optimizer-state memory by up to 65.5% while keeping performance."
WRONG_NUMBER = "GaLore cuts optimizer-state memory by up to 35.5% while keeping performance."
OTHER_PAPER = (
    "We study clustering under anisotropic Gaussian mixture models, where covariance "
    "matrices from different clusters are unknown."
)


@pytest.fixture(scope="module")
def model() -> CrossEncoder:
    return entailment_model()


@pytest.mark.parametrize("path", [ENTAILMENT_FILE, ANSWER_FILE])
def test_the_models_ship_inside_the_package(path):
    assert path.is_file()
    assert path.stat().st_size < 30_000_000


def test_probabilities_are_deterministic_and_in_range(model):
    pairs = [(FAITHFUL, EVIDENCE), (WRONG_NUMBER, EVIDENCE), (FAITHFUL, OTHER_PAPER)]
    first, second = model.probabilities(pairs), model.probabilities(list(reversed(pairs)))
    assert np.all((first >= 0) & (first <= 1))
    np.testing.assert_allclose(first, second[::-1], rtol=1e-5)


def test_the_claim_its_evidence_states_scores_above_a_changed_figure_and_another_paper(model):
    faithful, changed, elsewhere = model.probabilities(
        [(FAITHFUL, EVIDENCE), (WRONG_NUMBER, EVIDENCE), (FAITHFUL, OTHER_PAPER)]
    )
    assert faithful > 0.5
    assert changed < faithful
    assert elsewhere < 0.2


def test_an_empty_batch_is_empty(model):
    assert model.probabilities([]).shape == (0,)


def test_the_verifier_rejects_an_added_claim_the_alignment_passes(model):
    rules = SupportScorer()
    checked = SupportScorer(rules.embedder, model)
    stated = (
        "GaLore reduces memory usage by up to 65.5% in optimizer states while maintaining "
        "both efficiency and performance"
    )
    added = f"{stated}, though only for small models."
    assert rules.check(added, EVIDENCE).supported
    verdict = checked.check(added, EVIDENCE)
    assert not verdict.supported
    assert "does not say" in verdict.reason
    assert checked.check(f"{stated} on LLaMA 1B and 7B.", EVIDENCE).supported


MULTI_HEAD = (
    "In this study, we consider a sparse linear regression problem and investigate how a "
    "trained multi-head transformer performs in-context learning.",
    "We experimentally discover that the utilization of multi-heads exhibits different "
    "patterns across layers: multiple heads are utilized and essential in the first layer, "
    "while usually only a single head is sufficient for subsequent layers.",
    "We provide a theoretical explanation for this observation: the first layer "
    "preprocesses the context data, and the following layers execute simple optimization "
    "steps based on the preprocessed context.",
    "Moreover, we demonstrate that such a preprocess-then-optimize algorithm can "
    "significantly outperform naive gradient descent and ridge regression algorithms.",
)
MULTI_HEAD_TITLE = "How Transformers Utilize Multi-Head Attention in In-Context Learning?"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("After the first layer, how many attention heads does the model need?", 1),
        ("What does the first layer of the trained transformer do?", 2),
        ("Which baselines does the preprocess-then-optimize algorithm beat?", 3),
    ],
)
def test_the_answer_model_ranks_the_sentence_that_answers_above_its_neighbours(question, answer):
    chances = answer_model().probabilities(
        [(question, passage_text(MULTI_HEAD_TITLE, sentence)) for sentence in MULTI_HEAD]
    )
    assert int(np.argmax(chances)) == answer


def test_the_answer_model_gives_a_sentence_of_another_topic_little_chance():
    question = "After the first layer, how many attention heads does the model need?"
    (chance,) = answer_model().probabilities(
        [(question, passage_text("A Study of Baking", "Bread rises because yeast ferments."))]
    )
    assert chance < 0.1
