"""What curators run, never users at run time: the package-index client, refresh, the TOML writer, validation."""
