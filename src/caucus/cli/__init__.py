"""The `caucus` command line: one module per command group, `main.py` binds them."""
