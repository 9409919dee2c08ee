"""shardscope's application layer: the command line (cli/) and the main window's shell (window/)."""
