"""The command line: one module per subcommand of python main.py."""
