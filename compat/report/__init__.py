"""Pure renderers: results in, str out."""
