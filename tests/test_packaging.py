"""The package as ``pip install .`` makes it: a wheel built from a copy of the sources, installed into
a fresh virtualenv, runs programs from a directory outside the source tree, on the kernel the
build compiled (``lftj/kernel.py`` into an extension module, which the wheel holds beside its source).

The fresh venv has no pip and no packages of its own; the wheel goes in with ``pip --python``
(``--no-deps``), and its dependencies (lark, rich, pyarrow, ...) come from this interpreter's
site-packages through a ``.pth`` line. A plain path line appends that directory to ``sys.path``
after the venv's own site-packages, without running its ``.pth`` files, so the editable install of
the sources there stays inert: ``datalog``, ``lftj`` and ``maintenance`` are found only in the
wheel's copy, and a module the wheel lacks is a ``ModuleNotFoundError`` as for a user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("datalog", "lftj", "maintenance")
SHIPPED = (".py", ".lark")            # the modules and the data files the code reads
EXTENSIONS = ("lftj/kernel", "lftj/rowsets", "lftj/radix", "lftj/text")   # compiled at build time from their .py (setup.py)

PROGRAM = """
.decl edge(x: symbol, y: symbol)
.input edge
.decl blocked(x: symbol)
blocked("c").
.decl path(x: symbol, y: symbol)
.output path
path(x, y) :- edge(x, y), !blocked(y).
path(x, z) :- path(x, y), edge(y, z), !blocked(z).
"""


def _shipped(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for package in PACKAGES for p in (root / package).rglob("*")
            if p.suffix in SHIPPED and "__pycache__" not in p.parts}


def _copy_sources(target: Path) -> None:
    """What a clean clone holds of the package (a build never sees this checkout's build/ or caches)."""
    target.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, target / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, target / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.c"))


def _fresh_venv(where: Path) -> tuple[Path, Path]:
    """A venv without pip whose site-packages ends with this interpreter's (the dependencies)."""
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, site


def _run(args, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "DATALOG_KERNEL")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_wheel_holds_every_module_and_runs_outside_the_sources(tmp_path):
    _copy_sources(tmp_path / "src")
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
                  str(tmp_path / "src")], tmp_path, timeout=600)    # compiles the kernel (C)
    assert built.returncode == 0, built.stderr
    wheel, = (tmp_path / "dist").glob("*.whl")
    python, site = _fresh_venv(tmp_path / "venv")
    installed = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                      "-q", str(wheel)], tmp_path)
    assert installed.returncode == 0, installed.stderr

    assert _shipped(site) == _shipped(ROOT)                    # every module and data file, nothing else
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    assert all((site / (name + suffix)).is_file() for name in EXTENSIONS), sorted(site.rglob("*.so"))
    work = tmp_path / "work"
    (work / "facts").mkdir(parents=True)
    (work / "prog.dl").write_text(PROGRAM)
    (work / "facts" / "edge.facts").write_text("a\tb\nb\tc\nc\td\nb\te\n")
    (work / "updates.dl").write_text('+edge("e", "f").\n-edge("a", "b").\ncommit.\n')
    datalog = str(tmp_path / "venv" / "bin" / "datalog")

    where = _run([python, "-c", "import datalog; print(datalog.__file__)"], work)
    assert where.stdout.strip().startswith(str(site)), where.stdout + where.stderr
    run = _run([datalog, "run", "prog.dl", "-F", "facts", "-D", "-", "--updates", "updates.dl"], work)
    assert run.returncode == 0, run.stderr
    assert "a\tb\na\te\nb\te\n" in run.stdout                    # c is blocked: nothing through it
    assert "+path\te\tf" in run.stdout and "-path\ta\tb" in run.stdout
    why = _run([datalog, "explain-fact", "prog.dl", 'path("a", "e")', "-F", "facts"], work)
    assert why.returncode == 0 and "edge" in why.stdout, why.stderr
    kernel = _run([python, "-c", "from lftj import kernels; print(kernels.which(), kernels.kernel.__file__)"], work)
    assert kernel.stdout.split() == ["compiled", str(site / ("lftj/kernel" + suffix))], kernel.stdout + kernel.stderr
    version = _run([datalog, "--version"], work)
    assert version.returncode == 0 and version.stdout.split() == ["datalog-lftj", _version()], version.stderr


def _version() -> str:
    import tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
