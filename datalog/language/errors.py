"""Errors users can act on.

Every error the engine raises for a user mistake is a :class:`DatalogError`
with a stable ``code``, a message that names the thing that is wrong, and a
source :class:`Span`. ``render()`` gives ``file:line:col: error[code]: message``
followed by the source line and a caret:

>>> src = Source("prog.dl", "path(x, y) :- edge(x).\\n")
>>> err = ArityMismatch("edge has arity 2, used with 1 argument", Span(src, 1, 15, 1, 22))
>>> print(err.render())
prog.dl:1:15: error[arity_mismatch]: edge has arity 2, used with 1 argument
  path(x, y) :- edge(x).
                ^^^^^^^
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, eq=False)
class Source:
    """A named piece of program text (a file, a REPL line, a string)."""

    name: str
    text: str

    def line(self, number: int) -> str:
        lines = self.text.split("\n")                 # lark counts only \n as a line break
        return lines[number - 1].rstrip("\r") if 0 < number <= len(lines) else ""


@dataclass(frozen=True)
class Span:
    """Where a node came from: 1-based line and column, end inclusive of the last character."""

    source: Source | None
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    @property
    def file(self) -> str:
        return self.source.name if self.source else "<input>"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def render_diagnostic(kind: str, code: str, message: str, span: Span | None) -> str:
    """``file:line:col: kind[code]: message``, then the source line and a caret under the span."""
    where = f"{span}: " if span else ""
    head = f"{where}{kind}[{code}]: {message}"
    if not span or not span.source:
        return head
    text = span.source.line(span.line)
    if not text:
        return head
    start = max(span.column - 1, 0)
    if span.end_line == span.line and span.end_column:
        width = max(span.end_column - span.column, 1)
    else:
        width = 1
    width = min(width, max(len(text) - start, 1))
    return f"{head}\n  {text}\n  {' ' * start}{'^' * width}"


@dataclass(frozen=True)
class DatalogWarning:
    """Something Soufflé warns about (a singleton variable, an unused relation, an unknown
    pragma): printed like an error with ``warning[code]``, never blocking. Stages append them
    to ``Checked.warnings``; the CLI prints them to stderr unless ``--no-warn``."""

    code: str
    message: str
    span: Span | None = None

    def render(self) -> str:
        return render_diagnostic("warning", self.code, self.message, self.span)

    def __str__(self) -> str:
        return self.render()


class DatalogError(Exception):
    """Root of every user-facing error. Subclasses fix ``code``."""

    code = "error"

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.span = span

    def render(self) -> str:
        return render_diagnostic("error", self.code, self.message, self.span)

    def __str__(self) -> str:
        return self.render()


def _error(name: str, code: str, doc: str) -> type[DatalogError]:
    return type(name, (DatalogError,), {"code": code, "__doc__": doc})


SyntaxError_ = _error("DatalogSyntaxError", "syntax_error", "The text is not valid Datalog.")
UndefinedRelation = _error("UndefinedRelation", "undefined_relation", "A relation is used but never declared, defined or given facts.")
ArityMismatch = _error("ArityMismatch", "arity_mismatch", "A relation is used with the wrong number of arguments.")
TypeMismatch = _error("TypeMismatch", "type_mismatch", "A value or variable is used with two different types.")
UnboundVariable = _error("UnboundVariable", "unbound_variable", "A head or comparison variable is not bound by a positive atom.")
UnsafeNegation = _error("UnsafeNegation", "unsafe_negation", "A variable occurs only under negation.")
WildcardInHead = _error("WildcardInHead", "wildcard_in_head", "A head uses the wildcard _.")
AggregateInHead = _error("AggregateInHead", "aggregate_in_head", "A head holds an aggregate instead of a variable bound in the body.")
CyclicNegation = _error("CyclicNegation", "cyclic_negation", "Negation or aggregation through recursion.")
DivisionByZero = _error("DivisionByZero", "division_by_zero", "A rule divided by zero at run time.")
InvalidConversion = _error("InvalidConversion", "invalid_conversion", "A conversion functor got a value it cannot convert.")
NumberOutOfRange = _error("NumberOutOfRange", "number_out_of_range", "A literal, a value or an integer result is beyond the signed 64-bit range.")
InvalidArithmetic = _error("InvalidArithmetic", "invalid_arithmetic", "A float operation has no number as its result (IEEE 754 NaN: inf - inf, inf * 0).")
BadFactFile = _error("BadFactFile", "bad_fact_file", "A fact file has a malformed row.")
MissingInput = _error("MissingInput", "missing_input", "An input file or directory does not exist.")
RedefinedRelation = _error("RedefinedRelation", "redefined_relation", "A relation is declared twice.")
UnknownDirective = _error("UnknownDirective", "unknown_parameter", "An I/O directive has a parameter the engine does not know.")
OutputError = _error("OutputError", "output_error", "An output file could not be written: its directory cannot be made or "
                     "written (no permission, a read-only file system, a full disk), or its path is a directory.")
OutputPath = _error("OutputPath", "output_path", "An .output filename leaves the output directory (-D): an absolute "
                    "path, .. or a symlink leading out of it. Allowed only by --allow-paths on the command line "
                    "(Engine(allow_paths=True)), never by a program or a workspace.")
InputPath = _error("InputPath", "input_path", "An .input filename leaves the fact directory (-F): an absolute path, "
                   ".. or a symlink leading out of it. Allowed only by --allow-paths on the command line "
                   "(Engine(allow_paths=True)), never by a program or a workspace.")
NotEdb = _error("NotEdb", "not_edb", "A transaction tried to change a relation that rules derive.")
TooDeep = _error("TooDeep", "too_deep", "Expressions nest too deeply for the parser.")
BadPragma = _error("BadPragma", "bad_pragma", "A // @pragma comment names something the rule does not have.")
BadCommand = _error("BadCommand", "bad_command", "A command (of the REPL or the command line) is unknown or has wrong arguments.")
BadOption = _error("BadOption", "bad_option", "A command-line option is unknown, or its value is not one the option takes.")
TransactionState = _error("TransactionState", "transaction_state", "A REPL statement does not fit the open (or missing) transaction.")
NothingToUndo = _error("NothingToUndo", "nothing_to_undo", "The REPL's .undo found no commit of this session to undo "
                      "(none yet, all undone, or the program changed since).")
WorkspaceCorrupt = _error("WorkspaceCorrupt", "workspace_corrupt", "A workspace file is missing, truncated or fails its checksum.")
WorkspaceLocked = _error("WorkspaceLocked", "workspace_locked", "Another process holds a workspace's writer lock.")
WorkspaceVersion = _error("WorkspaceVersion", "workspace_version", "A workspace file has a format version this engine does not read.")
WorkspaceMissing = _error("WorkspaceMissing", "workspace_missing", "A directory is not a workspace.")
WorkspaceExists = _error("WorkspaceExists", "workspace_exists", "init into a directory that already holds a workspace.")
WorkspaceIO = _error("WorkspaceIO", "workspace_io", "A workspace file could not be read or written: a full disk, a "
                     "read-only file system, no permission, a missing directory. Nothing acknowledged is lost: "
                     "a commit whose record was not written is undone.")
IOFault = _error("IOFault", "io_error", "Reading or writing failed outside a workspace's and the output files "
                 "(each coded where it happens): standard output on a full disk, for one.")
WorkspaceReadOnly = _error("WorkspaceReadOnly", "workspace_readonly", "A commit through a workspace opened for reading.")
SparkUnavailable = _error("SparkUnavailable", "spark_unavailable", "Spark is needed but pyspark, pyarrow or Java is missing, or Spark did not start.")
SparkError = _error("SparkError", "spark_error", "Spark failed while reading, diffing or writing a table.")
SourceNotAppendOnly = _error("SourceNotAppendOnly", "append_only_violated", "A source declared append_only=true lost or "
                             "rewrote a file (or rows) a refresh already read: its deletions cannot be seen; "
                             "read it as a snapshot (without append_only) or re-init the workspace.")
DriverTooLarge = _error("DriverTooLarge", "driver_too_large", "A relation the plan needs on Spark's driver has more rows "
                        "than --driver-max-rows allows: raise that setting (and --driver-memory) or keep the "
                        "relation in Spark.")
BadBlock = _error("BadBlock", "bad_block", "addblock/removeblock named a block that exists already or does not exist.")
# ---- components (issue 18)
UnknownComponent = _error("UnknownComponent", "unknown_component", "A .init or a base names a component that is not declared in scope.")
ComponentArity = _error("ComponentArity", "component_arity", "A component is given a different number of type arguments than it has parameters.")
BadOverride = _error("BadOverride", "bad_override", "A component overrides a relation that no base component declares overridable.")
ComponentCycle = _error("ComponentCycle", "component_cycle", "A component inherits from itself, or instances nest beyond Soufflé's limit of 100.")
IncludePath = _error("IncludePath", "include_path", "A .include or #include names a file outside the program's directory and the -I "
                     "directories. Allowed only by --allow-paths on the command line.")
# ---- provenance (issue 21)
FactAbsent = _error("FactAbsent", "fact_absent", "why() was asked about a fact its relation does not hold (why_not explains a missing fact).")
BadFact = _error("BadFact", "bad_fact", "A fact given to why or why_not is not one tuple: a variable, _ or an expression stands where a value belongs.")
MemoryBudgetExceeded = _error("MemoryBudgetExceeded", "memory_budget", "An evaluation, or the state incremental maintenance "
                              "keeps for a rule, does not fit in the memory budget (--memory-budget; by default what "
                              "the machine has free).")
EngineBroken = _error("EngineBroken", "engine_broken", "A commit was stopped (an exception while its changes were being undone or "
                      "finished) where the engine could not be left as before or as after it: it refuses further work "
                      "until the workspace is opened again (the engine built again and rerun).")
NotUpdatable = _error("NotUpdatable", "not_updatable", "An update (datalog update, a commit) of a workspace relation "
                      "that a Spark or Delta source feeds: change the source and run datalog refresh.")
SourceReplaced = _error("SourceReplaced", "source_replaced", "A change-carrying source was replaced since the last "
                        "refresh (a Delta table dropped and made again): its changes do not continue those read.")


class OutOfMemory(DatalogError, MemoryError):
    """The machine ran out of memory (a ``MemoryError``): what was being done is undone. Also a
    ``MemoryError``, so that code which handles one handles this."""

    code = "out_of_memory"


class Interrupted(DatalogError):
    """Ctrl-C stopped a command (the CLI's exit status 130)."""

    code = "interrupted"
InternalError = _error("InternalError", "internal_error", "A bug in the engine, not a mistake in the input (the REPL undoes the statement and goes on).")

# ---- semantics (issue 18): eqrel, choice-domain, subsumption, inline, pragmas
Unsupported = _error("Unsupported", "unsupported", "A Soufflé construct this engine does not support.")
InvalidQualifier = _error("InvalidQualifier", "invalid_qualifier", "A relation qualifier (eqrel, choice-domain) does not fit its relation.")
InvalidInline = _error("InvalidInline", "invalid_inline", "An inline relation cannot be inlined: it is recursive, "
                       "an input or an output, or negated where a rule of it has a variable of its own or "
                       "the negated atom holds _.")
InvalidSubsumption = _error("InvalidSubsumption", "invalid_subsumption", "A subsumption rule's two atoms are not of one relation.")

# ---- Soufflé's rejections (its semantic checks): names, types, directives, plans
NameClash = _error("NameClash", "name_clash", "A type, relation, component or instance has the name of another kind of "
                   "thing in the same scope (Soufflé keeps their names disjoint).")
RedefinedType = _error("RedefinedType", "redefined_type", "A type is declared twice, or a .type redefines a "
                       "predefined type (number, unsigned, float, symbol).")
DuplicateAttribute = _error("DuplicateAttribute", "duplicate_attribute", "Two columns of one .decl (or fields of one "
                            "record type or branch) have the same name.")
InvalidSubtype = _error("InvalidSubtype", "invalid_subtype", "A subtype (<:) of a record type or an ADT: only "
                        "primitive types and their subtypes have subtypes.")
RedefinedDirective = _error("RedefinedDirective", "redefined_directive", "A relation is given .printsize twice.")
InvalidPlan = _error("InvalidPlan", "invalid_plan", "A .plan names a version the rule does not have, an order that "
                     "is not a permutation of the rule's atoms, or is given to a rule that is not recursive.")
RecursiveCounter = _error("RecursiveCounter", "recursive_counter", "A rule with $ or autoinc() is recursive: every "
                          "round would make new numbers, so the fixpoint would never be reached.")
DependentAggregates = _error("DependentAggregates", "dependent_aggregates", "Two aggregates of one rule each use a "
                             "variable that only the other binds (Soufflé's \"mutually dependent aggregate\").")
