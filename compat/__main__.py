from compat.cli import main

main()
