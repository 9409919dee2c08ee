"""The Python API: ``shardscope.inspect`` and the result it returns."""
