"""Errors a user can act on.

Every error raised for bad input is a ``ShardscopeError`` whose message is one line that
says what is wrong and names the fix; the CLI prints it as is and exits non-zero, the GUI
shows it in the messages dock and leaves the session untouched.
"""


class ShardscopeError(Exception):
    """Bad input: the message names what is wrong and how to fix it."""


class ProgramError(ShardscopeError):
    """A program could not be loaded, traced or lowered."""


class MeshError(ShardscopeError):
    """A mesh is malformed or does not fit the attached devices."""


class SpecError(ShardscopeError):
    """A partition spec does not fit its tensor or mesh."""
