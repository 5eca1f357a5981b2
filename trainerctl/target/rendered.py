"""A fresh render for the session's cluster: the platform detected on it when the options leave it
open (OpenShift serves the image.openshift.io group), and how the render was asked for, which the
install history records so that `rollback` can ask for it again."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.trainer.preflight import OPENSHIFT_GROUP
from trainerctl.owner_label import OwnerLabel
from trainerctl.render.render_options import RenderOptions
from trainerctl.render.pipeline import render
from trainerctl.render.recipe import recipe
from trainerctl.target.manifest_files import Target


def rendered(session: Session | None, options: RenderOptions, *, manager: Mapping[str, Any] | None = None,
             set_values=(), ha: bool = False) -> Target:
    """`options` rendered (checked before the cluster is asked anything); `manager`, `set_values`
    and `ha` as given, for the record. `session` None: the options name the platform."""
    if options.platform is None:
        openshift = session is not None and session.discovery.has_group(OPENSHIFT_GROUP)
        options = dataclasses.replace(options, platform="openshift" if openshift else "kubernetes")
    result = render(options)
    asked = recipe(options, manager=manager, set_values=set_values, ha=ha, overlay=result.source.overlay)
    return Target(result.objects, result.source, OwnerLabel(*result.owner_label), result.namespace, asked)
