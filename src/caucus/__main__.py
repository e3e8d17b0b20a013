from caucus.cli import main

main()
