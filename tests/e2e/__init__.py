"""Tests of the e2e cluster: the real controllers, scheduler, kwok and the process kubelet."""
