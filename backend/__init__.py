"""shardscope's model layer: pure Python, no Qt."""
