"""Version adapters: rewrite nodes of older opsets into the newest form of their op."""
