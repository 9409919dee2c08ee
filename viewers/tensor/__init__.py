"""One tensor: the inspector, its dimension slots, its tile grid and the layers the grid draws."""
