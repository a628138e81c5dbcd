"""Parameter guard: every warning a library emits while a transform is built is captured here.

A warning that says an argument was ignored, invalid, unknown or silently changed, a
``TypeError`` for a call with an argument the callee does not take, and DALI's ``KeyError`` for an
operator argument it does not define, fail the build with a ``contract`` error quoting the library: the row would otherwise time other work than the spec asks
for. Every other warning is returned to be recorded with the row. The patterns live only here.
"""

from __future__ import annotations

import re
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from .protocol import CONTRACT, WorkerError

# Warning texts that mean the transform was built with other parameters than it was given.
IGNORED_PARAMETER = (
    # AlbumentationsX 2.x: an unknown (e.g. renamed) argument is dropped and the default is used.
    re.compile(r"Argument\(s\) '[^']*' (?:are|is) not valid for transform"),
    # Generic wording of torchvision, Kornia, Pillow and others: "argument X is ignored", …
    re.compile(
        r"\b(?:argument|parameter|keyword|kwarg)s?\b[^.]*?"
        r"\b(?:ignored|not valid|invalid|unknown|unused|not used|has no effect|no longer used)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:unknown|unexpected|unused|ignored)\s+(?:argument|parameter|keyword|kwarg)s?\b", re.IGNORECASE),
    # A value the library corrected on its own (AlbumentationsX: "… automatically adjusted to …").
    re.compile(r"\bautomatically adjusted\b", re.IGNORECASE),
    # A deprecation that changes what the call does (a default that changes).
    re.compile(r"\bdefault (?:value|behaviou?r)\b[^.]*\bchange", re.IGNORECASE),
)

# ``TypeError`` texts of a call with an argument the callee does not take (unknown kwargs raise in
# torchvision, Kornia and Pillow).
BAD_CALL = re.compile(
    r"unexpected keyword argument|got multiple values for argument|"
    r"takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:was|were) given|"
    r"missing \d+ required (?:positional|keyword-only) arguments?"
)

# DALI checks operator arguments while a pipeline graph is defined: an argument the operator does
# not define raises ``KeyError('Argument "x" is not defined for operator "Flip".')``.
UNDEFINED_ARGUMENT = re.compile(r'Argument "[^"]+" is not defined for operator')


def ignores_a_parameter(text: str) -> bool:
    """Whether a warning's text says a parameter was ignored, invalid, unknown or changed."""
    return any(pattern.search(text) for pattern in IGNORED_PARAMETER)


def describe(caught: warnings.WarningMessage) -> str:
    """``Category: message`` on one line."""
    message = " ".join(str(caught.message).split())
    return f"{caught.category.__name__}: {message}"


def unique(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def verdict(what: str, texts: list[str]) -> list[str]:
    """The warnings to record, or a ``contract`` error when one says a parameter was not used."""
    fatal = [t for t in texts if ignores_a_parameter(t)]
    if fatal:
        more = f" (and {len(fatal) - 1} more such warnings)" if len(fatal) > 1 else ""
        raise WorkerError(
            CONTRACT,
            f"{what}: the library did not take the parameters as given: {fatal[0]}{more}",
            "\n".join(texts),
        )
    return texts


def _text(exc: BaseException) -> str:
    """The exception's message (a ``KeyError`` quotes its argument: unquote it)."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


@contextmanager
def building(what: str) -> Iterator[list[str]]:
    """Capture warnings while ``what`` is built; the yielded list receives the benign ones.

    Nothing is printed: the warnings go to the row (or into the error), never to a stream.
    """
    recorded: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield recorded
        except (TypeError, KeyError) as exc:
            pattern = BAD_CALL if isinstance(exc, TypeError) else UNDEFINED_ARGUMENT
            if pattern.search(str(exc)):
                raise WorkerError(
                    CONTRACT,
                    f"{what}: the library refused a parameter: {type(exc).__name__}: {_text(exc)}",
                    traceback.format_exc(),
                ) from None
            raise
    recorded.extend(verdict(what, unique([describe(w) for w in caught])))
