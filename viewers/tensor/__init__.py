"""One tensor: the inspector, its tile grid and tile labels."""
