# Names vulture (tests/cli/test_dead_code.py) cannot see used: each is called or read by
# something outside trainerctl's own code. Never executed; vulture reads it as uses of the names.
# A name goes here only with the caller that uses it.
# ruff: noqa
_ = object()

# typer: commands registered by decorator, the app's callback, a choice enum's members
_root  # cli/__init__.py: the app callback
install_cmd, uninstall_cmd, diff_cmd, status_cmd, check_cmd, support_bundle_cmd  # cli/cluster_cmd.py
verify_cmd  # cli/verify_cmd.py
completion, bash, zsh, fish, powershell  # cli/completion_cmd.py: the command and its shells
images_command, kustomize, render_command, fetch_command, upgrade_check  # the other commands
history_cmd, rollback_cmd  # cli/history_cmd.py
channels_cmd  # cli/channels_cmd.py
_.coerce  # cli/typer_support.py: click calls a ParamType's coerce
_.__signature__, _.__annotations__  # cli/flags.py: what typer reads of a command function

# The standard library and PyYAML call or read these
_.writable  # trust/stdio.py: io's protocol for a text stream
_.mtime, _.gname, _.uname  # operations/bundle_archive.py: tarfile.TarInfo fields
_.parse_string, _.scan_once  # kustomize/jsonpatch.py: json.JSONDecoder's hooks
_.descend_resolver, _.ascend_resolver  # kustomize/yamlread.py: PyYAML's resolver hooks
default_port, source_address, _._create_connection  # net/transport.py: http.client's
_.http_open, _.https_open  # kustomize/remote.py: urllib's handler protocol
__getattr__  # source/__init__.py: a module's lazy attributes (PEP 562)
signum, frame  # trust/interrupts.py: a signal handler's arguments

# Fields of typed views of server objects: what the server sends, read as a whole
controller, last_transition  # cluster/client/views/meta.py

# Read by tests as the code's own lists and probes of process-wide state
REASONS  # cluster/trainer/dependencies.py: every reason the code gives (the status schema test)
ASSET_DIRS  # render/assets.py: the folders the wheel must carry
registered, forget_all  # trust/redact.py: whether any credential is registered; a fresh run's state
