import sys

from trainerctl.cli import main

sys.exit(main())
