"""Saving the session (Save, Save as) and the Save / Discard / Cancel prompt before
unsaved edits would be lost (``confirm_unsaved``)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from shardscope.app.window.file_context import FileContext, FilePart
from shardscope.app.window.file_dialogs import choose_file
from shardscope.app.window.recent_files import RecentMenu
from shardscope.backend.errors import ShardscopeError


def ask_unsaved(parent: QWidget, title: str, text: str) -> QMessageBox.StandardButton:
    """Ask Save / Discard / Cancel (Save the default); the answer. Alt+S saves, Alt+D
    discards, Esc or closing the prompt cancels."""
    buttons = QMessageBox.StandardButton
    box = QMessageBox(
        QMessageBox.Icon.Question,
        title,
        text,
        buttons.Save | buttons.Discard | buttons.Cancel,
        parent,
    )
    box.setObjectName("unsaved_prompt")
    box.setDefaultButton(buttons.Save)
    box.setEscapeButton(buttons.Cancel)
    # The platform's own texts may carry no mnemonic: name the keys.
    box.button(buttons.Save).setText("&Save")
    box.button(buttons.Discard).setText("&Discard")
    box.exec()
    clicked = box.clickedButton()
    answer = box.standardButton(clicked) if clicked is not None else buttons.Cancel
    box.deleteLater()
    return answer


class SessionSaver(FilePart):
    """Writes the session to its file and asks before unsaved edits are lost."""

    def __init__(self, context: FileContext, recent: RecentMenu) -> None:
        super().__init__(context)
        self.recent = recent

    def confirm_unsaved(self, doing: str) -> bool:
        """Before edits would be lost: ask Save / Discard / Cancel; True to go on.

        The environment variable ``SHARDSCOPE_UNSAVED`` (``save``, ``discard`` or
        ``cancel``) answers without asking, for tests and scripts.
        """
        if self.undo.qstack.isClean() or self.session.source is None:
            return True
        buttons = QMessageBox.StandardButton
        answer = {"save": buttons.Save, "discard": buttons.Discard, "cancel": buttons.Cancel}.get(
            os.environ.get("SHARDSCOPE_UNSAVED", "").lower()
        )
        if answer is None:
            program = self.session.program
            name = program.name if program is not None else self.session.source
            answer = ask_unsaved(
                self.window,
                "Unsaved edits",
                f"{name} has edits that are not saved. Save them before {doing}?",
            )
        if answer == buttons.Save:
            return self.save_session()
        return answer == buttons.Discard

    def save_session(self) -> bool:
        """Save to the session's file, asking for one the first time."""
        if self.session.file is None:
            return self.ask_save_session_as()
        return self.save_session_to(self.session.file)

    def ask_save_session_as(self) -> bool:
        """Ask for a file and save the session to it; False if the user cancels."""
        chosen = choose_file(
            self.window,
            self.settings,
            "sessions",
            "Save session",
            "shardscope sessions (*.json)",
            save_as="session.json",
            suffix="json",
        )
        return self.save_session_to(chosen[0]) if chosen else False

    def save_session_to(self, path: str | Path) -> bool:
        """Save the session to ``path``; it becomes the session's file and the state is clean."""
        if self.session.source is None:
            self.messages.error("nothing to save: open a program first")
            return False
        try:
            self.session.save(path)
        except ShardscopeError as exc:
            self.messages.error(str(exc))  # "cannot write PATH: why; the fix"
            return False
        except OSError as exc:
            self.messages.error(f"cannot save {path}: {exc.strerror}")
            return False
        self.session.file = Path(path)
        self.undo.qstack.setClean()
        self.recent.add(str(path))
        self.messages.add(f"saved session {path}")
        return True
