"""Grammar tree -> AST: :class:`ToAst` has one method per rule (or alias) of ``grammar.lark``,
each returning the frozen dataclass of :mod:`datalog.language.ast` for it with its :class:`Span`;
:class:`ToQuery` adds the ``query`` rule (the REPL's ``?- body.``).

>>> from datalog.language.parser.lalr import parse_tree
>>> source = Source("<input>", 'p(x) :- e(x, "a"), x > 2 * -1.')
>>> rule = ToAst(source).transform(parse_tree(source.text, source)).rules[0]
>>> print(rule, rule.body[1].span)
p(x) :- e(x, "a"), x > (2 * -1). <input>:1:20
>>> rule.body[1].right.right  # -1 is a constant, not the negation of 1
Constant(value=-1)
"""

from __future__ import annotations

import json

from lark import Transformer, v_args

from datalog.language import ast, numbers
from datalog.language.composites import utf8
from datalog.language.errors import DatalogWarning, NumberOutOfRange, Source, Span, SyntaxError_, Unsupported


@v_args(meta=True)
class ToAst(Transformer):
    """One method per grammar rule (or alias); each returns an AST node with its span."""

    def __init__(self, source: Source, places=None):
        super().__init__()
        self.source = source
        self.places = places      # preprocessed text: its line -> (original Source, line); see preprocessor.py
        self.warnings: list = []  # DatalogWarnings of the parse, given to the Program

    def _span(self, meta) -> Span | None:
        if getattr(meta, "empty", True):
            return None
        return self._placed(meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok_span(self, tok) -> Span:
        return self._placed(tok.line, tok.column, tok.end_line, tok.end_column)

    def _placed(self, line, column, end_line, end_column) -> Span:
        if self.places is None:
            return Span(self.source, line, column, end_line, end_column)
        source, original = self.places.place(line)
        return Span(source, original, column, end_line and end_line - line + original, end_column)

    # statements ------------------------------------------------------------
    def start(self, meta, children):
        flat = []
        for child in children:
            flat.extend(child if isinstance(child, list) else [child])
        return ast.Program(tuple(flat), tuple(self.warnings))

    def declaration(self, meta, children):
        names, *rest = children                  # .decl a, b(x: number): one Declaration each
        _choice_domain_last(rest, self._tok_span)
        columns = tuple(c for c in rest if isinstance(c, ast.Column))
        words = tuple(str(q) for q in rest if isinstance(q, str))
        domains = tuple(k for q in rest if isinstance(q, _ChoiceDomain) for k in q)
        return [ast.Declaration(str(name), columns, self._span(meta), words, domains) for name in names]

    def qualifier(self, meta, children):
        (word,) = children
        return word                 # a token (its position, for _choice_domain_last) or a choice-domain

    # semantics (issue 18) ----------------------------------------------------
    def semantic_qualifier(self, meta, children):
        word, *keys = children
        if str(word) != "choice-domain":
            return word
        return _ChoiceDomain(k for k in keys if isinstance(k, tuple))

    def choice_key(self, meta, children):
        return tuple(str(name) for name in children if name.type == "NAME")

    def pragma(self, meta, children):
        key, value = children
        text = None if value is None else _unquote(value, self._tok_span(value))
        return ast.Pragma(_unquote(key, self._tok_span(key)), text, self._span(meta))

    def subsumption(self, meta, children):
        dominated, dominating, body, plan = children
        literals = () if body is None else _flatten_body(body, self._span(meta))
        return ast.Subsumption(dominated, dominating, literals, self._span(meta), plan=_orders(plan),
                               plan_spans=_plan_spans(plan))

    def column(self, meta, children):
        name, type_ = children
        return ast.Column(str(name), str(type_), self._span(meta))

    def type_declaration(self, meta, children):
        name, base = children
        return ast.TypeDeclaration(str(name), str(base), self._span(meta))

    # ---- records (issue 18): type declarations
    def union_type_declaration(self, meta, children):
        name, *members = children              # .type A = B (one member) is Soufflé's AliasType: A
        return ast.UnionTypeDeclaration(str(name), tuple(map(str, members)), self._span(meta))   # and B are one type

    def record_type_declaration(self, meta, children):
        name, *fields = children
        return ast.RecordTypeDeclaration(str(name), tuple(f for f in fields if f is not None), self._span(meta))

    def adt_type_declaration(self, meta, children):
        name, *branches = children
        return ast.AdtTypeDeclaration(str(name), tuple(branches), self._span(meta))

    def adt_branch(self, meta, children):
        name, *fields = children
        return ast.AdtBranch(str(name), tuple(f for f in fields if f is not None), self._span(meta))

    def field(self, meta, children):
        name, type_ = children
        return ast.Column(str(name), str(type_), self._span(meta))

    def directive(self, meta, children):
        kind, relations = children
        return [ast.Directive(kind, name, params, span) for name, params, span in relations]

    def directive_kind(self, meta, children):
        return str(children[0])[1:]

    def relation_list(self, meta, children):
        return children

    def io_relation(self, meta, children):
        name, *params = children
        return str(name), tuple(p for p in params if p is not None), self._tok_span(name)

    def param(self, meta, children):
        key, value = children
        text = _unquote(value, self._tok_span(value)) if value.type == "STRING" else str(value)
        return str(key), text

    def fact(self, meta, children):
        return ast.Rule((children[0],), (), self._span(meta))

    def rule(self, meta, children):
        *heads, body, plan = children
        return ast.Rule(tuple(heads), _flatten_body(body, self._span(meta)), self._span(meta),
                        plan=_orders(plan), plan_spans=_plan_spans(plan))

    # bodies ----------------------------------------------------------------
    def body(self, meta, children):
        return tuple(children)  # alternatives, each a tuple of literals

    def conjunction(self, meta, children):
        return tuple(children)

    def disjunction(self, meta, children):
        (alternatives,) = children
        if len(alternatives) == 1:
            return _Group(alternatives[0])
        return ast.Disjunction(tuple(_splice(a) for a in alternatives), self._span(meta))

    def atom(self, meta, children):
        name, *args = children
        args = tuple(a for a in args if a is not None)
        return ast.Atom(str(name), args, self._span(meta))

    def negation(self, meta, children):
        return _negated(children[0], self._span(meta))

    def comparison(self, meta, children):
        left, op, right = children
        return ast.Comparison(op, left, right, self._span(meta))

    def compare_op(self, meta, children):
        return str(children[0])

    # ---- functors (issue 18): constraints, keyword operators, unsigned literals
    # match(p, s) and contains(sub, s) are comparisons of their two sides (as Soufflé's
    # BinaryConstraint); true and false are the comparisons 1 = 1 and 1 != 1.
    def match_(self, meta, children):
        return ast.Comparison("match", children[0], children[1], self._span(meta))

    def contains_(self, meta, children):
        return ast.Comparison("contains", children[0], children[1], self._span(meta))

    def true_(self, meta, children):
        return ast.Comparison("=", ast.Constant(1), ast.Constant(1), self._span(meta))

    def false_(self, meta, children):
        return ast.Comparison("!=", ast.Constant(1), ast.Constant(1), self._span(meta))

    def keyword_op(self, meta, children):
        left, op, right = children
        return ast.BinaryOp(str(op), left, right, self._span(meta))

    def keyword_unary(self, meta, children):
        op, operand = children
        return ast.Functor(str(op), (operand,), self._span(meta))

    def autoinc(self, meta, children):
        """Bare ``$`` is ``autoinc()``: Soufflé's counter."""
        return ast.Functor("autoinc", (), self._span(meta))

    def ipv4_(self, meta, children):
        """``10.0.0.1`` is the number (10 << 24) + (0 << 16) + (0 << 8) + 1, as Soufflé's scanner
        makes it: a C int, so 255.255.255.255 is -1; an octet beyond 255 is out of range."""
        octets = [int(part) for part in str(children[0]).split(".")]
        if any(o > 255 for o in octets):
            raise NumberOutOfRange(f"the IPv4 address {children[0]} has an octet beyond 255", self._span(meta))
        value = (octets[0] << 24) + (octets[1] << 16) + (octets[2] << 8) + octets[3]
        return ast.Constant(numbers.wrap(value, 32), self._span(meta))

    def unsigned_(self, meta, children):
        """``7u``, ``0x1fu``, ``0b101u``: an unsigned literal, 0 .. 2^64-1 (Soufflé's 64-bit
        RamUnsigned); ``-7u`` is the unary minus of 7u, which the type check refuses."""
        text = str(children[0])[:-1]
        value = numbers.parse_unsigned(text)
        if value is None:
            raise NumberOutOfRange(f"the unsigned integer {_clip(text)}u is beyond {numbers.URANGE} "
                                   f"(0 .. {numbers.UINT_MAX})", self._span(meta))
        return ast.Constant(value, self._span(meta), unsigned=True)
    # ---- end functors

    # terms -----------------------------------------------------------------
    def variable(self, meta, children):
        tok = children[0]
        if str(tok) == "_":
            return ast.Wildcard(self._tok_span(tok))
        return ast.Variable(str(tok), self._tok_span(tok))

    def int_(self, meta, children):
        text = str(children[0])
        value = numbers.parse_int(text)
        if value is None:       # checked before int() is called: a huge literal costs nothing
            # 2^63 .. 2^64-1 is an unsigned where one is wanted (Soufflé's constants are
            # polymorphic); the type check refuses it anywhere else (typecheck.mark_unsigned)
            value = numbers.parse_unsigned(text)
        if value is None:
            raise NumberOutOfRange(f"the integer {_clip(text)} is beyond {numbers.RANGE} "
                                   f"({numbers.INT_MIN} .. {numbers.INT_MAX})", self._span(meta))
        return ast.Constant(value, self._span(meta))

    def float_(self, meta, children):
        text = str(children[0])
        value = numbers.parse_float(text)
        if value is None:
            raise NumberOutOfRange(f"the float {_clip(text)} is beyond the largest double", self._span(meta))
        return ast.Constant(value, self._span(meta))

    def string(self, meta, children):
        tok = children[0]
        return ast.Constant(_unquote(tok, self._tok_span(tok)), self._tok_span(tok))

    def _binary(self, op, meta, children):
        left, right = children
        return ast.BinaryOp(op, left, right, self._span(meta))

    def add(self, meta, children):
        return self._binary("+", meta, children)

    def sub(self, meta, children):
        return self._binary("-", meta, children)

    def mul(self, meta, children):
        return self._binary("*", meta, children)

    def div(self, meta, children):
        return self._binary("/", meta, children)

    def mod(self, meta, children):
        return self._binary("%", meta, children)

    def pow(self, meta, children):
        return self._binary("^", meta, children)

    def negate(self, meta, children):
        (operand,) = children
        if isinstance(operand, ast.Constant) and not isinstance(operand.value, str) and not operand.unsigned:
            if isinstance(operand.value, int) and not numbers.in_range(-operand.value):
                raise NumberOutOfRange(f"the integer -{operand.value} is beyond {numbers.RANGE} "
                                       f"({numbers.INT_MIN} .. {numbers.INT_MAX})", self._span(meta))
            return ast.Constant(-operand.value, self._span(meta))
        return ast.Negate(operand, self._span(meta))

    def functor(self, meta, children):
        name, *args = children
        return ast.Functor(str(name), tuple(a for a in args if a is not None), self._span(meta))

    def functor_name(self, meta, children):
        return str(children[0])

    # ---- records (issue 18): terms
    def record(self, meta, children):
        return ast.RecordTerm(tuple(c for c in children if c is not None), self._span(meta))

    def nil(self, meta, children):
        return ast.Nil(self._span(meta))

    def branch(self, meta, children):
        name, *args = children
        return ast.BranchTerm(str(name), tuple(a for a in args if a is not None), self._span(meta))

    def cast(self, meta, children):
        term, type_ = children
        return ast.Cast(term, str(type_), self._span(meta))

    def aggregate(self, meta, children):
        kind, target, body = children
        kind = str(kind)
        if target is None and kind != "count":
            raise SyntaxError_(f"{kind} needs an expression to aggregate, as in "
                               f"`{kind} x : {{ r(x) }}`", self._span(meta))
        if isinstance(body, ast.Atom):
            literals = (body,)
        else:
            literals = _flatten_body(body, self._span(meta))
        return ast.Aggregate(kind, target, literals, self._span(meta))



    # components (issue 18) ----------------------------------------------------
    def relation_names(self, meta, children):
        return children

    def component(self, meta, children):
        type_, *rest = children
        bases = tuple(c for c in rest if isinstance(c, ast.ComponentType))
        body = []
        for child in rest:
            if not isinstance(child, ast.ComponentType) and child is not None:
                body.extend(child if isinstance(child, list) else [child])
        return ast.Component(type_, bases, tuple(body), self._span(meta))

    def component_type(self, meta, children):
        name, *params = children
        return ast.ComponentType(str(name), tuple(str(p) for p in params if p is not None), self._span(meta))

    def instantiation(self, meta, children):
        name, type_ = children
        return ast.Instantiation(str(name), type_, self._span(meta))

    def override(self, meta, children):
        return ast.Override(str(children[0]), self._span(meta))

    def include(self, meta, children):
        tok = children[0]
        return ast.Include(_unquote(tok, self._tok_span(tok)), self._span(meta))

    def once(self, meta, children):
        return ast.Once(self._span(meta))

    def functor_declaration(self, meta, children):
        name, *params, result, stateful = children
        params = tuple(p for p in params if p is not None)
        return ast.FunctorDeclaration(str(name), params, str(result), stateful is not None, self._span(meta))

    def functor_param(self, meta, children):
        name, type_ = children
        return (str(name) if name is not None else None, str(type_))

    def user_functor(self, meta, children):
        # @f(x): a C++ function of a shared library; this engine does not load native code
        raise Unsupported(f"user-defined functor @{children[0]}: user-defined functors need C++ "
                          f"(a shared library Soufflé links in); this engine has none", self._span(meta))

    def source_position(self, meta, children):
        span = self._span(meta)
        return ast.Constant(span.line if children[0] == "__LINE__" else span.file, span)

    def plan(self, meta, children):
        return tuple(children)

    def plan_item(self, meta, children):
        version, *order = children
        return (int(version), tuple(int(i) for i in order if i is not None), self._span(meta))

    def limitsize(self, meta, children):
        name, key, limit = children
        if str(key) != "n":
            raise SyntaxError_(f".limitsize takes n=<number>, not {key}", self._tok_span(key))
        return ast.LimitSize(str(name), int(str(limit), 0), self._span(meta))

    def legacy_type(self, meta, children):
        keyword, name = children     # .number_type T is .type T <: number; .symbol_type T and .type T <: symbol
        self.warnings.append(DatalogWarning("deprecated", "Deprecated type declaration used", self._span(meta)))
        return ast.TypeDeclaration(str(name), "number" if keyword == ".number_type" else "symbol",
                                   self._span(meta))


# ---- functors (issue 18): negating a body term, as Soufflé's RuleBody::negated
_NEGATED_OP = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "match": "not_match",
               "not_match": "match", "contains": "not_contains", "not_contains": "contains"}


def _negated(literal, span):
    """``!a(x)`` is a Negation; ``!!a(x)`` is ``a(x)``; ``!x < y`` is ``x >= y``; ``!(a ; b)`` is
    ``!a, !b`` and ``!(a, b)`` is ``(!a ; !b)`` (De Morgan)."""
    if isinstance(literal, ast.Atom):
        return ast.Negation(literal, span)
    if isinstance(literal, ast.Negation):
        return literal.atom
    if isinstance(literal, ast.Comparison):
        return ast.Comparison(_NEGATED_OP[literal.op], literal.left, literal.right, span)
    alternatives = literal.alternatives if isinstance(literal, ast.Disjunction) else (tuple(literal),)
    conjuncts = []
    for alternative in alternatives:                     # not (l1, l2, ...): !l1 ; !l2 ; ...
        negated = [_negated(lit, span) for lit in alternative]
        options = tuple(tuple(n) if isinstance(n, _Group) else (n,) for n in negated)
        conjuncts.append(negated[0] if len(options) == 1 else ast.Disjunction(options, span))
    return conjuncts[0] if len(conjuncts) == 1 else _Group(conjuncts)


def _clip(text: str) -> str:
    return text if len(text) <= 30 else f"{text[:12]}...{text[-12:]} ({len(text)} digits)"


class _ChoiceDomain(tuple):
    """The column tuples of one ``choice-domain`` qualifier."""


class _Group(tuple):
    """A parenthesised conjunction without ``;``: spliced into the enclosing body."""


def _flatten_body(alternatives, span) -> tuple:
    """A body is a tuple of alternatives; one alternative is the plain conjunction."""
    if len(alternatives) == 1:
        return _splice(alternatives[0])
    return (ast.Disjunction(tuple(_splice(a) for a in alternatives), span),)


def _splice(literals) -> tuple:
    out = []
    for lit in literals:
        out.extend(_splice(lit) if isinstance(lit, _Group) else [lit])
    return tuple(out)


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "'": "'", "/": "/"}


def _unquote(token, span: Span) -> str:
    body = str(token)[1:-1]
    if "\\" not in body:
        return body
    try:
        text = json.loads('"' + body + '"')
    except json.JSONDecodeError:
        pass
    else:
        if not utf8(text):                      # "\ud800": no character, and no UTF-8 to write it in
            raise SyntaxError_(f"string {token} holds a lone surrogate escape, which is no character "
                               f"(a pair such as \\ud83d\\ude00 spells one)", span)
        return text
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] in _ESCAPES:
            out.append(_ESCAPES[body[i + 1]])
            i += 2
            continue
        if ch == "\\":
            raise SyntaxError_(f"unknown escape sequence in string {token}", span)
        out.append(ch)
        i += 1
    return "".join(out)


@v_args(meta=True)
class ToQuery(ToAst):
    """A query's body, built as a rule body is."""

    def query(self, meta, children):
        return _flatten_body(children[0], self._span(meta))


def _orders(plan) -> tuple:
    """A ``.plan``'s (version, atom order) pairs."""
    return tuple((version, order) for version, order, _ in plan or ())


def _plan_spans(plan) -> tuple:
    """Where each of a ``.plan``'s items is (invalid_plan points there)."""
    return tuple(span for _, _, span in plan or ())


def _choice_domain_last(parts, tok_span) -> None:
    """As in Soufflé's grammar, a choice-domain ends a ``.decl``: a qualifier after it is a
    syntax error there (``choice-domain x btree``)."""
    seen = False
    for part in parts:
        if isinstance(part, _ChoiceDomain):
            seen = True
        elif seen and isinstance(part, str):
            raise SyntaxError_(f"unexpected qualifier {part} after choice-domain: the choice-domain comes last "
                               f"in a .decl", tok_span(part))
