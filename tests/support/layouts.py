"""Checks on a laid-out program graph that tests of the layout and its placement share."""

import itertools
from collections import defaultdict

from shardscope.backend.program.placement import NODE_W


def overlaps(layout):
    """Pairs of labels of nodes in one row closer than a node's width."""
    rows = defaultdict(list)
    for node in layout.nodes:
        rows[round(node.y)].append(node)
    out = []
    for row in rows.values():
        row.sort(key=lambda n: n.x)
        out += [(a.label, b.label) for a, b in itertools.pairwise(row) if b.x - a.x < NODE_W]
    return out
