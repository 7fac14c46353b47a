"""factcheck batch --engine ray on a real local Ray instance (marked ``ray``: ``pytest -m ray``).

One Ray start for the module (about 5 s here); the same input checked by the
local engine and by Ray workers must give the same verdicts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_batch import lines_of, mixed_folder, offline_config, run

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def verdicts(path: Path) -> dict[str, Any]:
    """Each document's line without its usage and check time (timings and cache hits differ between runs, and
    a document without a date is dated when it is checked)."""
    return {r["id"]: {k: v for k, v in r.items() if k not in ("usage", "as_of")} for r in lines_of(path)}


def test_ray_engine_gives_the_local_engines_results(tmp_path: Path, local_ray: None) -> None:
    config = offline_config(tmp_path)
    docs = mixed_folder(tmp_path)
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"id": i, "text": t, "lang": "en"}) + "\n"
            for i, t in enumerate(
                [
                    "Smoking causes lung cancer. Statins lower LDL cholesterol.",
                    "Aspirin lowers the risk of heart attacks.",
                    "",
                ]
            )
        )
    )
    for source in (docs, jsonl):
        local, remote = tmp_path / f"local-{source.name}.jsonl", tmp_path / f"ray-{source.name}.jsonl"
        code, output = run("batch", source, "--out", local, "--config", config, "-q")
        assert code == 0, output
        code, output = run(
            "batch", source, "--out", remote, "--config", config, "-q", "--engine", "ray", "--concurrency", "4"
        )
        assert code == 0, output
        assert verdicts(remote) == verdicts(local)
        assert any(r["claims"] for r in verdicts(remote).values())
    # Resuming works the same way through Ray: a rerun has nothing to do.
    before = remote.read_bytes()
    assert run("batch", jsonl, "--out", remote, "--config", config, "-q", "--engine", "ray")[0] == 0
    assert remote.read_bytes() == before
