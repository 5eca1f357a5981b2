"""Packaging beyond what pyproject.toml can say: runtimes/, imagestreams/ and templates/ stay at
the repository root (reviewers find them there) and are mapped into the wheel as
trainerctl/_assets/<name>/, where trainerctl.render.assets looks first."""

from pathlib import Path

from setuptools import find_packages, setup

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

setup(packages=packages, package_dir=package_dir, package_data=package_data)
