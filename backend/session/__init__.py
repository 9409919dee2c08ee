"""The session document, its undoable edits, what views show of it, and saving it."""
