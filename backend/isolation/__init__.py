"""Running code we do not trust in other processes: the fork server and worker plumbing."""
