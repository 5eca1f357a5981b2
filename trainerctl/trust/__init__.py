"""The trust layer: what comes in from outside is read bounded and cut to one safe line, what goes
out is masked and serialized in one place and written safely, and Ctrl-C ends a command within
seconds (docs/trust.md). Empty, so that a command loads only the modules it uses."""
