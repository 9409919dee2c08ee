"""The device mesh: the mesh editor and the palette of axis chips."""
