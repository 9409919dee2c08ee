"""shardscope's application layer: CLI entry, main window, actions and workers."""
