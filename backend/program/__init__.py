"""Programs: load a .py, .mlir or example into a lowered module, its graph, locations and layout."""
