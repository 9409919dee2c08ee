"""The main window's shell: launch, window, tasks off the GUI thread, undo, settings, theme."""
