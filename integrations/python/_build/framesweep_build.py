"""An in-tree PEP 517 backend: setuptools' own, run in a temporary copy of this directory.

setuptools builds in place and leaves ``build/`` and ``framesweep_client.egg-info/`` in the source
tree; this wrapper hands it a copy instead, so ``pip install integrations/python`` leaves the
checkout as it was. It needs setuptools importable: offline, install with ``--no-build-isolation``
(Debian's python3-setuptools), since an isolated build would fetch setuptools from an index.
"""

import os
import shutil
import tempfile

from setuptools import build_meta as _sb

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", "tests")


def _in_copy(hook, *args, **kwargs):
    """Runs one setuptools hook with a temporary copy of the project as the working directory."""
    with tempfile.TemporaryDirectory(prefix="framesweep-client-build-") as tmp:
        src = os.path.join(tmp, "src")
        shutil.copytree(_HERE, src, ignore=_SKIP)
        cwd = os.getcwd()
        os.chdir(src)
        try:
            return hook(*args, **kwargs)
        finally:
            os.chdir(cwd)


def _abs(directory):
    return os.path.abspath(directory)


def get_requires_for_build_wheel(config_settings=None):
    return _in_copy(_sb.get_requires_for_build_wheel, config_settings)


def get_requires_for_build_sdist(config_settings=None):
    return _in_copy(_sb.get_requires_for_build_sdist, config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _in_copy(_sb.prepare_metadata_for_build_wheel, _abs(metadata_directory), config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    md = _abs(metadata_directory) if metadata_directory else None
    return _in_copy(_sb.build_wheel, _abs(wheel_directory), config_settings, md)


def build_sdist(sdist_directory, config_settings=None):
    return _in_copy(_sb.build_sdist, _abs(sdist_directory), config_settings)
