import sys

from datalog.cli.commands import main

sys.exit(main())
