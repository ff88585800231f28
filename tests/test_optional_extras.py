"""Without the optional extras every module still imports, so ``pytest --doctest-modules datalog``
collects on an install without the ``spark`` extra: pyspark and deltalake are imported inside the
functions that use them, never at a module's top (the notebook extension, which needs IPython by
its nature, is left out of collection by the root conftest where IPython is missing)."""

import subprocess
import sys

BLOCKED = """
import importlib, pkgutil, sys
for name in ("pyspark", "deltalake"):
    sys.modules[name] = None          # import pyspark now raises ImportError, as when not installed
import datalog, lftj, maintenance
failed = []
for package in (datalog, lftj, maintenance):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if module.name.endswith("__main__") or module.name == "datalog.notebook":
            continue
        try:
            importlib.import_module(module.name)
        except ImportError as error:
            failed.append(f"{module.name}: {error}")
print("\\n".join(failed))
"""


def test_every_module_imports_without_pyspark_or_deltalake():
    run = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "", "modules that need an extra at import:\n" + run.stdout


def test_a_module_that_imports_pyspark_at_its_top_is_found(tmp_path):
    # the check above can fail: a package whose module imports pyspark at its top is reported
    (tmp_path / "probe_pkg").mkdir()
    (tmp_path / "probe_pkg" / "__init__.py").write_text("")
    (tmp_path / "probe_pkg" / "eager.py").write_text("from pyspark.sql import functions\n")
    script = BLOCKED.replace("import datalog, lftj, maintenance", "import probe_pkg") \
                    .replace("(datalog, lftj, maintenance)", "(probe_pkg,)")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert "probe_pkg.eager" in run.stdout
