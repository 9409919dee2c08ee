"""The Run dock: each device's shard and the compiled collectives of a run on the devices."""
