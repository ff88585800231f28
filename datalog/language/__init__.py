"""The language: grammar, parser, AST, errors, checks, types, rewrites, strata, and the
naive reference evaluator. Imports nothing of the engine above it; only the parser imports lark."""
