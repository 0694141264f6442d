"""Keys: the key rules, the key file the app serves, each host's key state and the key check."""
