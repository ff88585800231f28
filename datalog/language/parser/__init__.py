"""Program text -> AST. The only package that imports lark.

Parsing is two passes: lark builds a tree with positions from ``grammar.lark``,
then :class:`ToAst` (methods named after grammar rules) turns it into the frozen
dataclasses of :mod:`datalog.language.ast`, giving each node its :class:`Span`.

>>> print(parse('.decl e(a: number, b: symbol)\\ne(1, "x").'))
.decl e(a: number, b: symbol)
e(1, "x").

The modules, each importing only those before it:

* :mod:`lalr`: the one LALR parser of ``grammar.lark``; lark's errors as syntax errors with carets
* :mod:`to_ast`: the Transformer, one method per grammar rule
* :mod:`options`: how a program file is read (preprocessor, -I, -M, --allow-paths)
* :mod:`preprocessor`: the C preprocessor (pcpp) and where its output's lines came from
* :mod:`includes`: ``.include`` and ``.once``
* :mod:`programs`: programs, queries and atoms from text or files (with rule pragmas)
* :mod:`updates`: updates files, batches of changes
"""

from datalog.language.parser.options import ParseOptions
from datalog.language.parser.programs import parse, parse_atom, parse_file, parse_query, parse_unexpanded
from datalog.language.parser.to_ast import ToAst
from datalog.language.parser.updates import Batch, parse_updates, parse_updates_file

__all__ = ["Batch", "ParseOptions", "ToAst", "parse", "parse_atom", "parse_file", "parse_query",
           "parse_unexpanded", "parse_updates", "parse_updates_file"]
