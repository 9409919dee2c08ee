"""The session document, its undoable edits, and saving and recovering it."""
