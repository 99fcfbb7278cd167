"""Access labels: which groups may read a file.

A document is restricted either by a line ``权限：组1,组2`` (anywhere in it; separators
``,`` ``，`` ``、`` or spaces) or by the sidecar ``ROOT/access.json`` mapping path
patterns (fnmatch, ``*`` also crosses ``/``) to group lists. Unlabelled files are
public. A caller may read a restricted file when it is in *any* listed group.

Labels fail closed: a malformed label, a label given twice or in both places, or an
unreadable sidecar hides the affected files from everyone (label ``!``) and the index
reports why. An ACL string is ``""`` (public), ``"!"`` (nobody) or sorted groups
joined by ``,``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

ACCESS_FIELD = "权限"
SIDECAR = "access.json"
PUBLIC = ""
NOBODY = "!"
_GROUP = re.compile(r"^[\w.-]+$")
_SEPARATORS = re.compile(r"[,，、\s]+")


@dataclass(frozen=True)
class Principal:
    """A caller: a name (for traces and logs) and the groups it belongs to."""

    name: str
    groups: frozenset[str] = frozenset()

    def may_read(self, acl: str) -> bool:
        return acl == PUBLIC or (acl != NOBODY and not self.groups.isdisjoint(acl.split(",")))


def visible_acls(acls: Iterable[str], principal: Principal | None) -> list[str]:
    """The ACLs a caller sees; without a principal (the corpus owner) all but NOBODY."""
    return sorted(a for a in set(acls) if (a != NOBODY if principal is None else principal.may_read(a)))


def parse_groups(values: Iterable[str]) -> str | None:
    """Normalise group names to an ACL string; None when any name is malformed."""
    groups: set[str] = set()
    for value in values:
        parts = [p for p in _SEPARATORS.split(value.strip()) if p]
        if not parts or not all(_GROUP.match(p) for p in parts):
            return None
        groups.update(parts)
    return ",".join(sorted(groups)) if groups else None


@dataclass
class AccessRules:
    """The sidecar's rules (pattern → ACL), or the reason it could not be read."""

    rules: list[tuple[str, str | None]]
    error: str | None = None

    @classmethod
    def load(cls, root: Path) -> AccessRules:
        path = root / SIDECAR
        if not path.exists():
            return cls([])
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return cls([], f"{SIDECAR} cannot be read ({exc}); every file is hidden until it is fixed")
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(g, str) for g in v)
            for k, v in data.items()
        ):
            return cls(
                [], f'{SIDECAR} must map path patterns to lists of groups, e.g. {{"documents/hr/*": ["hr"]}}'
            )
        return cls([(pattern, parse_groups(groups)) for pattern, groups in sorted(data.items())])

    def label(self, path: str, inline: list[str]) -> tuple[str, str | None]:
        """``(acl, problem)`` for one file given its inline ``权限`` values."""
        if self.error is not None:
            return NOBODY, self.error
        matched = [acl for pattern, acl in self.rules if fnmatchcase(path, pattern)]
        if inline and matched:
            return NOBODY, f"labelled both by {ACCESS_FIELD} lines and by {SIDECAR}; hidden from everyone"
        if len(inline) > 1:
            return NOBODY, f"{len(inline)} {ACCESS_FIELD} lines; write one; hidden from everyone"
        if len(matched) > 1:
            return NOBODY, f"matched by {len(matched)} {SIDECAR} patterns; hidden from everyone"
        if inline or matched:
            acl = parse_groups(inline) if inline else matched[0]
            if acl is None:
                return (
                    NOBODY,
                    "malformed access label (groups are letters, digits, _ . -); hidden from everyone",
                )
            return acl, None
        return PUBLIC, None
