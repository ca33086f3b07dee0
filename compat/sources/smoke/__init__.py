"""`compat smoke`'s host side: the temp dir, the child processes of the judged interpreter, their launchers."""
