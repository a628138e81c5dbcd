"""The readable line of a DALI error, shared by the DALI adapter and DALI's pipeline backend
(a module of its own, so that neither imports the other for it)."""

from __future__ import annotations


def dali_error(exc: BaseException) -> str:
    """The line of a DALI error that says what went wrong (DALI wraps it in the operator's
    definition traceback): the first after ``encountered:``, else the first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if "encountered:" in lines and lines.index("encountered:") + 1 < len(lines):
        return lines[lines.index("encountered:") + 1]
    return lines[0] if lines else type(exc).__name__
