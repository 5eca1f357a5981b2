"""SHA-256 without loading OpenSSL: importing hashlib does, a noticeable part of a short run's
start-up (kustomize's name-suffix hashes: small inputs, where OpenSSL's speed does not pay for
loading it)."""

try:  # CPython's own SHA-256
    from _sha2 import sha256  # Python 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256
    except ImportError:  # another Python
        from hashlib import sha256

__all__ = ["sha256"]
