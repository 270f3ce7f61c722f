from toolnexus_gen.cli import run

run()
