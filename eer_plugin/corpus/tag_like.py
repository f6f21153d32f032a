"""Entity types named like tags (``B-PER``, ``I-ORG``, ``U-LOC``, ``L-MISC``, ``S-PER``, ``E-PER``): the one check of
every reader that takes a type from its input (the annotation-tool importers, ``eer-dictionary``'s dictionaries,
training JSON lines), so that each says it alike.

A type is a name, and such a name is accepted: it may be the type's real name. But it is most often a tag pasted
where its type belongs (a CoNLL column copied into a dictionary, a tool's labels set up from a tag list), and the
model would then tag it ``B-B-PER`` and learn ``B-PER`` and ``I-PER`` as two types. :class:`TagLikeTypes` warns once
per type, naming the first place it appears.
"""

import re
from typing import Optional, Set

from eer_plugin.core.tags import TAG_PREFIXES  # the prefixes of BIO, BIOUL and BIOES tags

_TAG_LIKE = re.compile(rf"^[{TAG_PREFIXES}]-(\S.*)$", re.DOTALL)


def tag_like(label: str) -> Optional[str]:
    """The type that ``label`` would be if it is a tag (``PER`` for ``B-PER``), or None when it is not named like
    one (a prefix of :data:`TAG_PREFIXES`, a hyphen and a name)."""
    match = _TAG_LIKE.match(label) if isinstance(label, str) else None
    return match.group(1) if match else None


def tag_like_warning(label: str, where: str) -> str:
    """The warning for ``label``, a type named like a tag, first seen at ``where`` (``file:line``, and what there)."""
    type_name = tag_like(label)
    return (
        f"{where}: entity type {label!r} is named like a tag: probably a tag pasted as a type, whose type would be "
        f"{type_name!r} (as a type of its own it is tagged 'B-{label}', 'U-{label}', ...); use "
        f"{type_name!r} unless {label!r} is the type's real name"
    )


class TagLikeTypes:
    """The types named like tags that one read has met: :meth:`check` gives the warning once per type."""

    def __init__(self) -> None:
        #: every type checked (each is looked at once)
        self.checked: Set[str] = set()

    def check(self, label: str, where: str) -> Optional[str]:
        """The warning for ``label`` at ``where`` the first time that a type named like a tag is met, else None."""
        if label in self.checked:
            return None
        self.checked.add(label)
        return None if tag_like(label) is None else tag_like_warning(label, where)
