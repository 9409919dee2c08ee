"""The window's file actions share one ``FileContext``: the same session, undo stack,
settings and Messages the window shows."""

from shardscope.app.window.file_context import FileContext, FilePart


def test_every_file_action_works_on_the_windows_own_parts(make_window):
    window = make_window("example:mlp")
    files = window.files
    parts = [files.saver, files.loader, files.exporter]
    assert all(isinstance(p, FilePart) for p in parts)
    (context,) = {p.context for p in parts}
    assert isinstance(context, FileContext)
    assert context.window is window and context.session is window.session
    assert context.messages is window.messages and context.settings is window.settings
    for part in parts:
        assert (part.window, part.session, part.undo) == (window, window.session, context.undo)
