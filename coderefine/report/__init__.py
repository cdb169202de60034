"""Renderers: turn results into text for people and JSON (and more) for machines."""
