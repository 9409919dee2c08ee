"""The sharding vocabulary: meshes, partition specs, tile maps, value shardings, text forms."""
