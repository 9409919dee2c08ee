"""The main window's shell: the window and its parts (docks, menus, files, propagation
scheduling), launch and the display check, tasks off the GUI thread, undo, settings, theme."""
