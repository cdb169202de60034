"""Models: one protocol with one call, the providers and replay that implement it, and their prices.
Imports only the project layer (the batch state file) and the base modules: the refiner and the doors
pass their requests in."""
