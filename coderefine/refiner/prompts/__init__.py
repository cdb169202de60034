"""Prompt texts, one file per role, versioned with the model protocol (docs/protocol.md)."""
