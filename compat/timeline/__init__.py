"""The API timeline: what each indexed release of a tracked package exports and imports, read from the code of
every release, and the questions doctor, explain and lock ask of it (does a release have a name, which link
breaks, which side of a call drifted). See docs/architecture.md, "The API timeline"."""
