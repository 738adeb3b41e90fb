"""LaTeX in exported text (BibTeX fields, arXiv metadata) turned into plain Unicode for
display: accents (`{\\"u}` → ü), escapes (`\\%`), case-protecting braces and text macros
go; math (`$x^2$`) stays as written. Decoding is pylatexenc's.
"""

from __future__ import annotations

import bisect
import logging
import re
from functools import cache

_TOKEN = re.compile(r"\\[a-zA-Z]+|\\.|[{}$]|\s+")
_NEEDS_DECODING = re.compile(r"[\\{}$~]|--|``|''")
_BARE_PERCENT = re.compile(r"(?<!\\)%")
_TEXT_MACROS = {
    "textbackslash": "\\",
    "textasciicircum": "^",
    "textasciitilde": "~",
    "textless": "<",
    "textgreater": ">",
    "textbar": "|",
}
# how Zotero (and most exporters) escape special characters in BibTeX, `\%` or
# `{\textless}`, and the braces that protect a word's case, `{GaLore}`
_ESCAPE = re.compile(r"\\([#$%&_{}])|\{\\(" + "|".join(_TEXT_MACROS) + r")\}|([{}])")
# macros pylatexenc drops or decodes otherwise
_MACROS = {
    **_TEXT_MACROS,
    "url": "%s",
    "mbox": "%s",
    "LaTeX": "LaTeX",
    "TeX": "TeX",
}

logging.getLogger("pylatexenc").setLevel(logging.ERROR)


@cache
def _decoder(keep_braces: bool):
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec
    from pylatexenc.latex2text import get_default_latex_context_db as text_context
    from pylatexenc.latexwalker import get_default_latex_context_db as parse_context

    context = text_context()
    context.add_context_category(
        "citeqa-exports",
        prepend=True,
        macros=[MacroTextSpec(name, simplify_repl=text) for name, text in _MACROS.items()],
    )
    decoder = LatexNodes2Text(
        latex_context=context, math_mode="verbatim", keep_braced_groups=keep_braces
    )
    parsing = parse_context()  # built once: pylatexenc builds one per call otherwise

    def decode(piece: str) -> str:
        try:
            return decoder.latex_to_text(piece, latex_context=parsing)
        except Exception:  # pylatexenc can fail on malformed input; show it as written
            return piece

    return decode


def _cuts(text: str) -> tuple[list[int], list[int]]:
    """Starts and ends of the spaces at which `text` can be cut into pieces that LaTeX
    reads alone as in context: outside braces and math, not between a macro and its
    arguments."""
    starts, ends = [], []
    depth, in_math, after_macro = 0, False, False
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0].isspace():
            following = text[match.end() : match.end() + 1]
            if depth == 0 and not in_math and not after_macro and following not in "{[":
                starts.append(match.start())
                ends.append(match.end())
            continue
        after_macro = token[0] == "\\" and token[1:2].isalpha()
        if token == "{":
            depth += 1
        elif token == "}":
            depth = max(0, depth - 1)
        elif token == "$":
            in_math = not in_math
    return starts, ends


def _unescaped(text: str, keep_braces: bool) -> str | None:
    """`text` with escaped characters restored and braces dropped, if escapes and braces
    are all the LaTeX it holds (pylatexenc would give the same, only slower); else None."""
    if _NEEDS_DECODING.search(_ESCAPE.sub("", text)):
        return None

    def restore(match: re.Match) -> str:
        escaped, macro, brace = match.groups()
        return escaped or (_TEXT_MACROS[macro] if macro else brace if keep_braces else "")

    return _ESCAPE.sub(restore, text)


def latex_to_text(text: str, keep_braces: bool = False) -> str:
    """Plain text of a LaTeX-encoded field (`keep_braces`: braces kept, for BibTeX name
    lists, where they group a name). A bare `%` is text here, not a comment.

    Only the pieces that hold more LaTeX than escapes and braces go through the decoder:
    it reads character by character, and whole abstracts would take seconds per hundred."""
    text = _BARE_PERCENT.sub(r"\\%", text)
    if (plain := _unescaped(text, keep_braces)) is not None:
        return plain
    pylatexenc = _decoder(keep_braces)

    def decode(piece: str) -> str:
        plain = _unescaped(piece, keep_braces)
        return pylatexenc(piece) if plain is None else plain

    starts, ends = _cuts(text)
    out, done = [], 0
    for match in _NEEDS_DECODING.finditer(text):
        if match.start() < done:
            continue
        cut = bisect.bisect_right(starts, match.start())
        begin = ends[cut - 1] if cut else 0
        end = starts[cut] if cut < len(starts) else len(text)
        out += [text[done:begin], decode(text[begin:end])]
        done = end
    out.append(text[done:])
    return "".join(out)
