"""Errors a user can act on.

Every error raised for bad input is a ``ShardscopeError`` whose message is one line that
says what is wrong and names the fix; the CLI prints it as is and exits non-zero, the GUI
shows it in the messages dock and leaves the session untouched.
"""

import re


class ShardscopeError(Exception):
    """Bad input: the message names what is wrong and how to fix it."""


class ProgramError(ShardscopeError):
    """A program could not be loaded, traced or lowered."""


class MeshError(ShardscopeError):
    """A mesh is malformed or does not fit the attached devices."""


class SpecError(ShardscopeError):
    """A partition spec does not fit its tensor or mesh."""


def shortened(value: object, limit: int = 60, *, keep: str = "head", quote: bool = True) -> str:
    """``value`` as an error quotes it (``repr`` with ``quote``, else as text): whole
    where it is at most ``limit`` characters, else its first (``keep="head"``) or last
    (``keep="tail"``, for a path) ``limit - 20`` and how long it is, so no error line
    echoes a long input."""
    text = str(value)
    if len(text) <= limit:
        return repr(text) if quote else text
    part = text[: limit - 20] if keep == "head" else text[-(limit - 20) :]
    shown = repr(part) if quote else part
    size = f"({len(text)} characters)"
    return f"{shown}...{size}" if keep == "head" else f"{size}...{shown}"


_WORD = re.compile(r"\S{201,}")


def shortened_words(message: str) -> str:
    """``message`` with each run of over 200 characters without a space (an input quoted
    whole by a message that did not shorten it, such as one of argparse's) cut to its
    first and last characters and its length."""
    return _WORD.sub(lambda m: f"{m[0][:60]}...({len(m[0])} characters)...{m[0][-40:]}", message)
