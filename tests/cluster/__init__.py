"""Tests of commands against a real kube-apiserver (tests/testenv), with the controllers played where needed."""
