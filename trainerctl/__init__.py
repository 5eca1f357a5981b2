"""trainerctl: install Kubeflow Trainer v2 the way a careful platform engineer would."""

__version__ = "0.1.0"
