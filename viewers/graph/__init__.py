"""The program graph: the view, its graphics items and its panel."""
