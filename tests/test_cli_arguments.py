"""Command-line mistakes are diagnostics: an unknown option or command, a bad option value, a missing
or extra argument exit 1 with a coded one-line message, the nearest valid spelling and the short
usage of the command concerned; Soufflé's form (``datalog prog.dl``) and flags; ``--version``.

In-process (``datalog.cli.main``) except where the process itself is the point."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from datalog.cli import main
from datalog.cli.arguments import mistake
from datalog.cli.commands import _parser
from datalog.cli.souffle_flags import REFUSED

PROGRAM = """\
.decl edge(a: number, b: number)
.input edge
.decl path(a: number, b: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "prog.dl").write_text(PROGRAM)
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "edge.facts").write_text("1\t2\n2\t3\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, code: str, *args) -> str:
    """The stderr of a mistake: exit 1, one coded line (and at most the usage), no traceback."""
    status, out, err = cli(capsys, *args)
    assert status == 1 and out == "", (status, out, err)
    lines = err.splitlines()
    assert lines[0].startswith(f"error[{code}]: "), err
    assert len(lines) <= 2 and (len(lines) == 1 or lines[1].startswith("usage: ")), err
    assert "Traceback" not in err
    return err


# ---------------------------------------------------------------- unknown options and commands

def test_an_unknown_option_names_the_nearest_and_the_commands_usage_only(project, capsys):
    err = refused(capsys, "bad_option", "run", "prog.dl", "--facts", "facts")
    assert "unknown option --facts; did you mean `-F` (`--fact-dir`)?" in err
    assert "usage: datalog run PROGRAM" in err
    assert "explain-fact" not in err and "refresh" not in err          # not every command's usage
    assert not (project / "path.csv").exists()


def test_an_option_in_the_wrong_case_is_suggested_in_the_right_one(project, capsys):
    assert "did you mean `-F` (`--fact-dir`)?" in refused(capsys, "bad_option", "run", "prog.dl", "-f", "facts")
    assert "did you mean `-D` (`--output-dir`)?" in refused(capsys, "bad_option", "run", "prog.dl", "-d", "-")


def test_every_commands_misspelt_options_get_a_valid_nearest_spelling(capsys):
    parser = _parser()
    checked = 0
    for name, command in parser.commands.choices.items():
        for spellings in command.spellings():
            long = next((s for s in spellings if s.startswith("--") and len(s) > 5), None)
            if long is None:
                continue
            typo = long[:3] + long[4] + long[3] + long[5:]            # two letters swapped
            if command.knows(typo) or long[3] == long[4]:
                continue
            err = mistake(parser, [name, "x", "y", typo] if name != "repl" else [name, typo])
            assert err.startswith(f"error[bad_option]: datalog {name}: unknown option {typo}"), err
            suggested = re.findall(r"`(-[^`]+)`", err.splitlines()[0])
            assert suggested and all(command.knows(s) for s in suggested), err
            assert long in suggested, err
            checked += 1
    assert checked > 40


def test_an_unknown_command_names_the_nearest(project, capsys):
    err = refused(capsys, "bad_command", "rnu", "prog.dl")
    assert "unknown command rnu; did you mean `run`?" in err
    assert "did you mean `status`?" in refused(capsys, "bad_command", "stauts", "ws")


def test_no_command_and_a_misspelt_top_option(project, capsys):
    assert "a command is missing" in refused(capsys, "bad_command")
    assert "did you mean `--version`?" in refused(capsys, "bad_option", "--verison")


def test_missing_and_extra_arguments_are_bad_commands(project, capsys):
    assert "datalog run: missing PROGRAM" in refused(capsys, "bad_command", "run")
    assert "datalog init: missing WORKSPACE and PROGRAM" in refused(capsys, "bad_command", "init")
    assert "unexpected argument other.dl" in refused(capsys, "bad_command", "run", "prog.dl", "other.dl")


def test_a_bad_option_value_is_a_bad_option_with_the_nearest_choice(project, capsys):
    err = refused(capsys, "bad_option", "run", "prog.dl", "--join", "leapfog")
    assert "invalid choice" in err and "did you mean `leapfrog`?" in err
    assert "not a size" in refused(capsys, "bad_option", "run", "prog.dl", "--memory-budget", "lots")


def test_version(capsys):
    status, out, err = cli(capsys, "--version")
    assert status == 0 and err == ""
    assert out == f"datalog-lftj {metadata.version('datalog-lftj')}\n"


# ---------------------------------------------------------------- Soufflé's form and flags

def test_a_program_without_a_command_runs_as_datalog_run(project, capsys):
    expected = cli(capsys, "run", "prog.dl", "-F", "facts", "-D", "-")
    assert expected[0] == 0 and "1\t3" in expected[1]
    assert cli(capsys, "prog.dl", "-F", "facts", "-D", "-") == expected
    assert cli(capsys, "-F", "facts", "prog.dl", "-D", "-") == expected        # options first, as Soufflé allows
    assert cli(capsys, "prog.dl", "--fact-dir", "facts", "--output-dir", "-") == expected
    assert cli(capsys, "prog.dl", "--fact-dir=facts", "--output-dir=-") == expected


def test_an_option_before_a_command_is_refused(project, capsys):
    assert "goes after the command" in refused(capsys, "bad_option", "-F", "facts", "run", "prog.dl")


def test_jobs_are_accepted_and_say_how_many_threads_evaluate(project, capsys):
    status, out, err = cli(capsys, "prog.dl", "-j", "4", "-F", "facts", "-D", "-")
    assert status == 0 and "1\t3" in out
    assert err == "note: -j 4: this engine evaluates in 1 thread; Soufflé's parallel jobs have no counterpart here\n"
    assert cli(capsys, "prog.dl", "-j", "auto", "-F", "facts", "-D", "-")[2].startswith("note: -j auto:")
    assert cli(capsys, "prog.dl", "--jobs", "1", "-F", "facts", "-D", "-")[2] == ""
    assert cli(capsys, "prog.dl", "-j", "4", "-w", "-F", "facts", "-D", "-")[2] == ""
    assert "positive whole number or auto" in refused(capsys, "bad_option", "prog.dl", "-j", "0")


@pytest.mark.parametrize("flag, value, instead", [
    ("-o", "prog", "`datalog run PROGRAM` evaluates it directly"),
    ("-c", None, "`datalog run PROGRAM` evaluates it directly"),
    ("-p", "profile.log", "`--timing`"),
    ("-g", "prog.cpp", "`datalog explain PROGRAM`"),
    ("-r", "report.html", "`datalog explain PROGRAM`"),
    ("--parse-errors", None, "`datalog check PROGRAM`"),
    ("-s", "python", "`from datalog import Engine`"),
])
def test_souffles_other_flags_are_refused_with_what_to_use_instead(project, capsys, flag, value, instead):
    args = ["prog.dl", "-F", "facts", "-D", "out", flag, *([value] if value else [])]
    err = refused(capsys, "unsupported", *args)
    assert f"Soufflé's {flag}" in err and instead in err
    assert not (project / "out").exists()                             # nothing evaluated, nothing written
    assert refused(capsys, "unsupported", "run", *args) == err


def test_every_refused_flag_is_refused_in_each_spelling(project, capsys):
    for spellings, takes_value, _, _ in REFUSED:
        for flag in spellings:
            err = refused(capsys, "unsupported", "prog.dl", flag, *(["x"] if takes_value else []))
            assert " / ".join(spellings) in err


def test_the_console_script_reports_a_mistake_and_runs_souffles_form(project):
    script = str(Path(sys.executable).with_name("datalog"))
    bad = subprocess.run([script, "run", "prog.dl", "--facts", "facts"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stderr.startswith("error[bad_option]: ") and "Traceback" not in bad.stderr
    good = subprocess.run([script, "prog.dl", "-F", "facts", "-D", "-"], capture_output=True, text=True, timeout=60)
    assert good.returncode == 0 and "1\t3" in good.stdout, good.stderr
