"""`trainerctl images`: every image an install runs, from the same render, with where each comes
from; their digests at their registries; the overrides that pin them (`--images-from`); the
ImageSetConfiguration that mirrors them (oc-mirror); whether they exist (`check --images`)."""
