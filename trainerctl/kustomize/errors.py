"""The one error type the engine raises: a message naming the file and the field."""

from trainerctl.errors import InputError


class KustomizeError(InputError):
    pass
