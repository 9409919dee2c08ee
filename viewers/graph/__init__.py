"""The program graph: the view, the scene it draws, its graphics items and its panel."""
