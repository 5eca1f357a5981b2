"""Tests of the command line as users run it: flags, output, exit codes, bad and hostile input, the docs and the package layout."""
