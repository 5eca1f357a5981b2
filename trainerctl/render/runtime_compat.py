"""Keep out of a render the runtimes its ref's CRD cannot take.

trainerctl's runtimes/ are one set for every upstream ref. A field that an older
ClusterTrainingRuntime CRD lacks would be pruned by the API server (or the apply rejected under
strict field validation), leaving a runtime that silently behaves differently. Such a runtime is
left out of the render with one line saying which field the ref lacks, instead.
"""

from __future__ import annotations

from trainerctl import ui
from trainerctl.render.crd_schema import validate_against_crd

RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


def compatible_runtimes(runtimes: list[dict], manifests: list[dict], ref: str | None) -> list[dict]:
    """`runtimes` minus those the CRDs among `manifests` reject; a warning line for each one dropped.

    Without the CRD in the render (e.g. `-c runtimes` alone) there is nothing to check against.
    """
    kept = []
    for obj in runtimes:
        if obj.get("kind") not in RUNTIME_KINDS:
            kept.append(obj)
            continue
        try:
            errors = validate_against_crd(obj, manifests)
        except LookupError:
            kept.append(obj)
            continue
        if not errors:
            kept.append(obj)
            continue
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        ui.warn(f"render: {obj['kind']} {obj['metadata']['name']} left out: the {obj['kind']} CRD of "
                f"{ref or 'this source'} does not accept it: {errors[0]}{more}")
    return kept
