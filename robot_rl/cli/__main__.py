import sys

from robot_rl.cli import main

sys.exit(main())
