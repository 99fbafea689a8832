"""Boolean logic synthesis: the smallest domain, proving the contract runtime end to end."""
