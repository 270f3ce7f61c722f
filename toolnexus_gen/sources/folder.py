"""What a sync would change in a source's snapshot folder: the files it should hold against
those it holds now (an MCP server's snapshot, a declared OpenAPI document's folder)."""

from __future__ import annotations


class FolderChanges:
    """`added`, `removed` and `changed` of `files` (file name -> text to write) against
    `existing` (file name -> text on disk), for a dataclass that has both."""

    files: dict[str, str]
    existing: dict[str, str]

    @property
    def added(self) -> list[str]:
        return sorted(self.files.keys() - self.existing.keys())

    @property
    def removed(self) -> list[str]:
        return sorted(self.existing.keys() - self.files.keys())

    @property
    def changed(self) -> list[str]:
        common = self.files.keys() & self.existing.keys()
        return sorted(name for name in common if self.files[name] != self.existing[name])
