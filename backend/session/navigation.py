"""Where the user is in the program graph: the frames entered and the scopes unfolded.

``Navigation`` is the graph views' model of place: the stack of frames (the function
first, then each region or callee entered, the last one shown) and, per frame visited,
the scopes unfolded in it. Views draw what it holds and write what the user does back to
it; two views given one ``Navigation`` (the side-by-side panes) show the same place.
``events.changed`` fires only on a real change. ``to_json`` and ``from_json`` read and
write the graph view's part of a saved session's view state (``{"frames": [frame
keys], "expanded": {frame key: [scope paths]}}``), as sessions have always saved it.

A frame the model holds no unfolded scopes for shows its default (``default_expanded``,
which needs the program): a view records it with ``remember_default``, which announces
nothing, since the place did not change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from psygnal import Signal, SignalGroup

from shardscope.backend.program.layout import Frame

JsonDict = dict[str, object]


def place_json(frames: Iterable[Frame], unfolded: Mapping[str, Iterable[str]]) -> JsonDict:
    """The saved view state of a place: frame keys, and the unfolded scopes of each frame
    visited, sorted."""
    return {
        "frames": [f.key() for f in frames],
        "expanded": {key: sorted(scopes) for key, scopes in unfolded.items()},
    }


class NavigationEvents(SignalGroup):
    """Change notifications of a ``Navigation``."""

    changed = Signal()  # the frames or some frame's unfolded scopes changed


class Navigation:
    """The frame stack and the unfolded scopes per frame; see the module docstring."""

    def __init__(
        self,
        frames: Iterable[Frame] = (),
        unfolded: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.events = NavigationEvents()
        self._frames: tuple[Frame, ...] = tuple(frames)
        self._unfolded: dict[str, frozenset[str]] = {
            key: frozenset(scopes) for key, scopes in (unfolded or {}).items()
        }

    # -- reading --------------------------------------------------------------------------
    @property
    def frames(self) -> tuple[Frame, ...]:
        """The frames entered, outermost first; the last one is shown."""
        return self._frames

    @property
    def frame(self) -> Frame | None:
        """The frame shown, or None before a program."""
        return self._frames[-1] if self._frames else None

    def unfolded(self, frame_key: str | None = None) -> frozenset[str] | None:
        """The scopes unfolded in frame ``frame_key`` (default: the frame shown), or None
        where none were recorded (the frame shows its default)."""
        if frame_key is None:
            frame = self.frame
            if frame is None:
                return None
            frame_key = frame.key()
        return self._unfolded.get(frame_key)

    def unfolded_map(self) -> dict[str, frozenset[str]]:
        """The unfolded scopes of every frame visited, by frame key (a copy)."""
        return dict(self._unfolded)

    def state_key(self, default: frozenset[str] = frozenset()) -> tuple:
        """What a view of this place shows: the frame keys and the shown frame's unfolded
        scopes (``default`` where none were recorded). Two views with equal keys lay out
        the same drawing."""
        unfolded = self.unfolded()
        return (
            tuple(f.key() for f in self._frames),
            default if unfolded is None else unfolded,
        )

    # -- changing -------------------------------------------------------------------------
    def show(self, frames: Iterable[Frame], unfolded: Mapping[str, Iterable[str]]) -> bool:
        """Hold ``frames`` and ``unfolded`` scopes per frame key, replacing the whole
        place at once; True if it changed."""
        new_frames = tuple(frames)
        new_unfolded = {key: frozenset(scopes) for key, scopes in unfolded.items()}
        if new_frames == self._frames and new_unfolded == self._unfolded:
            return False
        self._frames, self._unfolded = new_frames, new_unfolded
        self.events.changed.emit()
        return True

    def enter(self, frame: Frame) -> bool:
        """Enter ``frame`` (a region or callee of the frame shown): it is shown now."""
        self._frames = (*self._frames, frame)
        self.events.changed.emit()
        return True

    def back(self, levels: int = 1) -> bool:
        """Leave ``levels`` frames, never the outermost; True if any was left."""
        keep = max(1, len(self._frames) - max(0, levels))
        if keep >= len(self._frames):
            return False
        self._frames = self._frames[:keep]
        self.events.changed.emit()
        return True

    def set_unfolded(self, scopes: Iterable[str], frame_key: str | None = None) -> bool:
        """Unfold exactly ``scopes`` in frame ``frame_key`` (default: the frame shown);
        True if that changed what the frame unfolds."""
        key = frame_key if frame_key is not None else self._shown_key()
        new = frozenset(scopes)
        if self._unfolded.get(key) == new:
            return False
        self._unfolded[key] = new
        self.events.changed.emit()
        return True

    def remember_default(self, frame_key: str, scopes: Iterable[str]) -> frozenset[str]:
        """Record ``scopes`` as what frame ``frame_key`` unfolds where nothing was
        recorded yet, without an event (the frame already showed them); returns what the
        frame unfolds."""
        return self._unfolded.setdefault(frame_key, frozenset(scopes))

    def _shown_key(self) -> str:
        frame = self.frame
        if frame is None:
            raise ValueError("no frame is shown")
        return frame.key()

    def copy(self) -> Navigation:
        """A model of its own holding the same place."""
        return Navigation(self._frames, self._unfolded)

    # -- saved view state -----------------------------------------------------------------
    def to_json(self) -> JsonDict:
        """The graph view's part of the saved view state (see ``place_json``)."""
        return place_json(self._frames, self._unfolded)

    @classmethod
    def from_json(cls, state: Mapping[str, object]) -> Navigation:
        """The place a saved view state names (missing parts: none); ValueError where a
        frame key is not in the form ``Frame.key`` writes."""
        frames = [Frame.from_key(str(key)) for key in state.get("frames") or ()]
        unfolded = state.get("expanded") or {}
        if not isinstance(unfolded, Mapping):
            raise ValueError("the expanded scopes are not a mapping of frame keys")
        return cls(frames, {str(k): [str(s) for s in v] for k, v in unfolded.items()})
