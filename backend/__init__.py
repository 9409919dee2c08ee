"""shardscope's model layer: pure Python, no Qt, in rooms by concern (see the README's Layout)."""
