import sys

from datalog.cli import main

sys.exit(main())
