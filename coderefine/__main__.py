import sys

from coderefine.cli.main import main

sys.exit(main())
