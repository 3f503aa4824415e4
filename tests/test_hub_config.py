"""The JupyterHub settings in docs/workshop.md are the ones `make hub-test` runs a real hub with (tests/hub/check_hub.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def check_hub():
    spec = importlib.util.spec_from_file_location("dreamloop_check_hub", REPO / "tests" / "hub" / "check_hub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_workshop_culling_settings_are_the_hub_tests():
    hub = check_hub()
    readme = (REPO / "docs" / "workshop.md").read_text(encoding="utf-8")
    block = readme.split("# jupyterhub_config.py\n", 1)[1].split("```", 1)[0]
    args = re.findall(r'"(--MappingKernelManager\.[^"]+)"', block)
    assert args and args == hub.SERVER_ARGS
    for needle in ('"jupyterhub_idle_culler", "--timeout=3600"', '"list:users", "read:users:activity", '
                   '"read:servers", "delete:servers"', '"name": "jupyterhub-idle-culler-role"'):
        assert needle in block and needle in hub.HUB_CONFIG, needle
    config = hub.HUB_CONFIG.format(public_port=1, hub_port=2, proxy_api_port=3, proxy="/bin/true", state="/s",
                                   password="p", args=hub.SERVER_ARGS, environment={})
    compile(config, "jupyterhub_config.py", "exec")  # the hub's config is valid Python
    assert 'authenticator_class = "dummy"' in config and 'spawner_class = "simple"' in config
    assert "127.0.0.1" in config and "0.0.0.0" not in config
