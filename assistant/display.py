"""Readable text from abstracts that contain LaTeX: `$\\mathcal{NC}$`, `\\emph{E-RLHF}`,
`\\citep{zou2023universal}`.

`plain_text` is for terminals and JSON (math as Unicode, markup and citation commands
gone); `markdown_text` is for the web UI, which renders `$...$` math itself and only needs
the text markup removed (and keeps the spaces at its ends, as the UI converts an abstract
piece by piece). Both leave text without LaTeX as it is."""

from __future__ import annotations

import re
from functools import cache, lru_cache

_HAS_LATEX = re.compile(r"\\[A-Za-z]+|\$[^$]+\$")
_CITATION = re.compile(
    r"\s*~?\\(?:cite|citep|citet|citealp|citeauthor|ref|eqref|label)\*?\{[^}]*\}"
)
_TEXT_MARKUP = re.compile(
    r"\\(?:emph|textbf|textit|texttt|textsc|textrm|textsf|underline|mbox|text|url|href)\{([^{}]*)\}"
)
_FONT_SWITCH = re.compile(r"\{\\(?:bf|it|em|tt|sc|rm|sf)\s+([^{}]*)\}")
_SPACES = re.compile(r"\s+")
# "%" in an abstract is a percent sign, never a LaTeX comment.
_PERCENT = re.compile(r"(?<!\\)%")


@cache
def _converter():
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True)


def _without_markup(text: str) -> str:
    text = _CITATION.sub("", text)
    previous = None
    while previous != text:  # nested markup: \textbf{\emph{x}}
        previous = text
        text = _FONT_SWITCH.sub(r"\1", _TEXT_MARKUP.sub(r"\1", text))
    return text


@lru_cache(maxsize=16384)
def plain_text(text: str) -> str:
    """`text` with LaTeX turned into plain Unicode text: '$\\ell_2$' -> 'ℓ_2'."""
    if not _HAS_LATEX.search(text):
        return text
    converted = _converter().latex_to_text(_PERCENT.sub(r"\\%", _without_markup(text)))
    return " ".join(converted.split())


@lru_cache(maxsize=16384)
def markdown_text(text: str) -> str:
    """`text` with LaTeX text markup and citation commands removed, `$...$` math kept for a
    renderer that understands it."""
    if not _HAS_LATEX.search(text):
        return text
    return _SPACES.sub(" ", _without_markup(text))
