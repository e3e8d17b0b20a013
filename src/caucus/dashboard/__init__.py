"""The operator's console side: the live feed, snapshots, transcript export."""
