"""Packaging beyond what pyproject.toml can say.

- runtimes/, imagestreams/ and templates/ stay at the repository root (reviewers find them there)
  and are mapped into the wheel as trainerctl/_assets/<name>/, where trainerctl.render.assets
  looks first.
- The wheel carries the pinned default release (trainerctl/_embedded/, written by
  trainerctl.source.embedding at build time from $TRAINERCTL_EMBED_SOURCE, ../shared or a fetch,
  checked against the pinned tree digest), so `trainerctl render` works without network. The
  upstream data is never in the repository. An editable install has no copy and fetches instead.
"""

import sys
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
ASSETS = ("runtimes", "imagestreams", "templates")

packages = find_packages(include=["trainerctl", "trainerctl.*"])
package_dir = {}
package_data = {"trainerctl": ["data/*"], "trainerctl.kustomize": ["data/*"]}
for name in ASSETS:
    # Each folder (and sub-folder) becomes a data-only package of the wheel.
    for folder in sorted(p for p in [ROOT / name, *(ROOT / name).rglob("*")] if p.is_dir()):
        rel = folder.relative_to(ROOT)
        package = "trainerctl._assets." + ".".join(rel.parts)
        packages.append(package)
        package_dir[package] = rel.as_posix()
        package_data[package] = ["*"]


class BuildWithRelease(build_py):
    """build_py, then the pinned release into the build dir (what the wheel zips)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        sys.path.insert(0, str(ROOT))  # this checkout's trainerctl, not one installed elsewhere
        from trainerctl.errors import TrainerctlError
        from trainerctl.source.embedding import embed

        try:
            embed(Path(self.build_lib) / "trainerctl" / "_embedded", ROOT, log=lambda line: print(line, file=sys.stderr))
        except TrainerctlError as exc:
            sys.exit(f"error: {exc}")


setup(packages=packages, package_dir=package_dir, package_data=package_data, cmdclass={"build_py": BuildWithRelease})
