"""`compat smoke`'s pure half: the stage plan from the facts, and each stage's result from its children's output."""
