from compat.entry import main

main()
