from datalog.cli import entry

entry()
