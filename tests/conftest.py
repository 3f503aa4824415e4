"""Shared fixtures: offline models whose every request must pass the fake API's validation."""

from __future__ import annotations

import pytest

from dreamloop.model import offline as make_offline


@pytest.fixture
def offline():
    """``offline(script, **kw)`` -> AnthropicModel; after the test, asserts that the loop
    never sent a request the real API would reject (no 400 ``invalid_request_error``)."""
    made = []

    def make(script, **kwargs):
        model = make_offline(script, **kwargs)
        made.append(model)
        return model

    yield make
    for model in made:
        rejected = [
            (r.index, r.error["message"])
            for r in model.api.requests
            if r.status == 400 and r.error and r.error.get("type") == "invalid_request_error"
            and not r.error["message"].startswith("prompt is too long")
        ]
        assert not rejected, f"the loop sent requests the API rejects: {rejected}"


@pytest.fixture(scope="session")
def notebook_build():
    """``notebooks/build.py`` as a module: ``notebook_client()`` is the kit's one way to execute a notebook."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "notebooks" / "build.py"
    spec = importlib.util.spec_from_file_location("dreamloop_notebook_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
