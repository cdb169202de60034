"""Models: one protocol with one call, and the providers and replay that implement it."""
