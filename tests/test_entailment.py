"""The bundled claim/evidence cross-encoder, and how the local verifier uses it."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.answering.cross_encoder import ENTAILMENT_FILE, CrossEncoder, entailment_model
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


def test_the_model_ships_inside_the_package():
    assert ENTAILMENT_FILE.is_file()
    assert ENTAILMENT_FILE.stat().st_size < 30_000_000


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
    added = f"{stated}, with no change to the model."
    assert rules.check(added, EVIDENCE).supported
    verdict = checked.check(added, EVIDENCE)
    assert not verdict.supported
    assert "does not say" in verdict.reason
    assert checked.check(f"{stated} on LLaMA 1B and 7B.", EVIDENCE).supported
