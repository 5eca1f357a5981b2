"""Custom resources validated against a CRD's structural schema as the API server validates them.

Generic: nothing here knows Trainer. `validate.validate(obj, schema)` gives the verdict (what the
API server rejects, and what is not evaluated here); `coerce` is the pruning and defaulting
before it, `gonum` the Go meaning of JSON numbers, `formats` the string formats, `goregex` Go's
regular expressions in Python.
"""
