"""Compiled HLO text: asking XLA to dump its modules, and reading their instructions back."""
