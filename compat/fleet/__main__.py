from compat.cli.fleet import gather_main

gather_main()
