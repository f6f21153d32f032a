"""Whether an archive member's path may be extracted: the one check of model archives (tar) and split encoder
archives (zip)."""

from pathlib import PurePosixPath
from typing import Optional


def path_problem(name: str) -> Optional[str]:
    """Why an archive member's path is unsafe to extract (absolute, or with ``..``), or None; shared by
    model archives (tar, :mod:`eer_plugin.runtime.archive`) and split encoder archives (zip,
    :mod:`eer_plugin.runtime.encoder_packages`)."""
    if (
        not name
        or name.startswith(("/", "\\"))
        or PurePosixPath(name).is_absolute()
        or (len(name) > 1 and name[1] == ":")
    ):
        return "its path is absolute"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "its path contains '..'"
    return None
