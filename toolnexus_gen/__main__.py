from toolnexus_gen.cli import main

main()
