import sys

from trainerctl.entry import main

sys.exit(main())
