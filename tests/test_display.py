"""LaTeX in abstracts made readable: plain text for terminals and JSON, markup-free text with
math kept for the web UI."""

from __future__ import annotations

import pytest

from assistant.display import markdown_text, plain_text


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        (r"the $\mathcal{NC}$ phenomenon", "the 𝒩𝒞 phenomenon"),
        (r"we call \emph{E-RLHF}, safer", "we call E-RLHF, safer"),
        (r"as in \citep{zou2023universal} and AdvBench", "as in and AdvBench"),
        (r"\textbf{\emph{Bold}} claim", "Bold claim"),
        (r"an $\ell_2$ radius of $\sqrt{d}$", "an ℓ_2 radius of √(d)"),
        (
            "reduces memory by 65.5% in optimizer states",
            "reduces memory by 65.5% in optimizer states",
        ),
        (r"reduces error by 47\% and $3\times$ faster", "reduces error by 47% and 3× faster"),
    ],
)
def test_plain_text(raw, plain):
    assert plain_text(raw) == plain


def test_markdown_text_keeps_math_for_the_renderer_and_drops_markup():
    raw = r"we call \emph{E-RLHF} \citep{x} with $\mathcal{NC}$"
    assert markdown_text(raw) == r"we call E-RLHF with $\mathcal{NC}$"


def test_markdown_text_keeps_the_spaces_at_the_ends_of_a_piece():
    # The UI converts an abstract piece by piece around the cited span.
    assert markdown_text(" we call \\emph{E-RLHF}  again. ") == " we call E-RLHF again. "


def test_text_without_latex_is_returned_as_is():
    text = "A plain sentence (with parentheses) and 3.5% of {braces}."
    assert plain_text(text) == text and markdown_text(text) == text
