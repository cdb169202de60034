import sys

from coderefine.cli import main

sys.exit(main())
