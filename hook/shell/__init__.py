"""Reading shell text: the lexer of one word (lexer.py), the fast recursive-descent reader (parser.py),
the tree-sitter slow path (treesitter.py), and the shell-state interpreter (interpreter.py). Knows
nothing about merges; imports nothing here so that loading one module stays cheap (design §7)."""
