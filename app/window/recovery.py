"""The prompt on start that offers to restore the edits of a window that did not exit
cleanly: its recovery file is restored, deleted when discarded, or set aside when bad."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.session.persistence import orphan_recoveries, read_recovery, set_aside
from shardscope.backend.sharding.mesh import Mesh
from shardscope.viewers.common.messages import MessagesView


def offer_recoveries(
    parent: QWidget | None,
    messages: MessagesView,
    restore: Callable[[dict, Path], None],
) -> bool:
    """Offer the recovery files of windows that no longer run, newest first, and
    ``restore(state, path)`` the first one the user takes; True if one is being restored.
    A discarded one is deleted; a bad one is reported and renamed ``.bad``."""
    for path in orphan_recoveries():
        try:
            state = read_recovery(path)
        except ShardscopeError as exc:
            bad = set_aside(path)
            messages.error(f"{exc} (recovery file set aside as {bad.name})")
            continue
        if state is None:
            continue
        if ask_restore(parent, state):
            restore(state, path)
            return True
        path.unlink(missing_ok=True)
    return False


def ask_restore(parent: QWidget | None, state: dict) -> bool:
    """Ask whether to restore a recovered session (env ``SHARDSCOPE_RECOVERY`` answers
    ``restore`` or ``discard`` without asking, for tests and scripts)."""
    answer = os.environ.get("SHARDSCOPE_RECOVERY", "").lower()
    if answer in ("restore", "yes"):
        return True
    if answer in ("discard", "no"):
        return False
    n = len(state.get("specs") or [])
    parts = [f"{n} tensor spec{'s' if n != 1 else ''}"]
    mesh = state.get("mesh")
    if mesh:
        try:
            parts.append(f"mesh {Mesh.from_json(mesh).describe()}")
        except ShardscopeError:
            pass
    if state.get("file"):
        parts.append(f"session {state['file']}")
    box = QMessageBox(parent)
    box.setWindowTitle("Restore unsaved session?")
    box.setText(
        f"shardscope did not exit cleanly while editing {state.get('source')} "
        f"({', '.join(parts)}). Restore those edits?"
    )
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
    box.setDefaultButton(QMessageBox.StandardButton.Yes)
    return box.exec() == QMessageBox.StandardButton.Yes
