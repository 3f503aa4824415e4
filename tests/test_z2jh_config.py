"""deploy/z2jh: the chart config is one the Zero to JupyterHub chart accepts, and the image is what it names.

The config is merged over the chart's own defaults (``tests/fixtures/z2jh/values.yaml``)
by Helm's rule and validated against the chart's schema (``values.schema.yaml``,
JSON Schema draft 07) with the ``jsonschema`` library, as ``helm`` does before it
installs anything: a misspelt or misplaced key fails here, not on the day. Then
the settings that were measured or tested elsewhere are the same here: the
kernel culling and the idle culler of ``make hub-test``, the memory figures of
docs/workshop.md, and the image's user, home, command and book.
"""

from __future__ import annotations

import copy
import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
CHART = REPO / "tests" / "fixtures" / "z2jh"
DEPLOY = REPO / "deploy" / "z2jh"


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


copy_book = load("dreamloop_copy_book", DEPLOY / "copy_book.py")
pod_memory_sizes = load("dreamloop_pod_memory", REPO / "bench" / "pod_memory.py").byte_size


def helm_merge(defaults: Any, override: Any) -> Any:
    """Helm's coalescing of a values file over the chart's: maps merged key by key, a null removing the default
    key, anything else replaced."""
    if not (isinstance(defaults, dict) and isinstance(override, dict)):
        return copy.deepcopy(override)
    merged = copy.deepcopy(defaults)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = helm_merge(merged.get(key), value) if key in merged else copy.deepcopy(value)
    return merged


def config() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "config.yaml").read_text(encoding="utf-8"))


def chart_values(override: dict[str, Any]) -> dict[str, Any]:
    return helm_merge(yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8")), override)


def schema_errors(values: dict[str, Any]) -> list[str]:
    """Each error as ``path: message``, as helm lists them."""
    schema = yaml.safe_load((CHART / "values.schema.yaml").read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    return sorted(f"{'.'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
                  for error in validator.iter_errors(values))


def test_the_config_merged_over_the_charts_defaults_is_valid():
    assert schema_errors(chart_values(config())) == []


def test_the_charts_schema_is_checked_by_jsonschema_as_draft_07():
    schema = yaml.safe_load((CHART / "values.schema.yaml").read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema_errors(chart_values({})) == []  # the chart's own defaults pass: the check itself is sound


def _with(path: str, value: Any, *, remove: str | None = None) -> dict[str, Any]:
    changed = config()
    if remove:
        *parents, last = remove.split(".")
        node = changed
        for part in parents:
            node = node[part]
        del node[last]
    *parents, last = path.split(".")
    node = changed
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return changed


MISTAKES = [
    # (what an instructor wrote: key, value and the key it replaces; where the schema says so, the key it names)
    ("a misspelt key: singleuser.memory.limt", ("singleuser.memory.limt", "1G", "singleuser.memory.limit"),
     "singleuser.memory", "'limt'"),
    ("a misspelt section: singleuser.memroy", ("singleuser.memroy", {"limit": "1G"}, None), "singleuser", "'memroy'"),
    ("a misspelt key in the culler: cull.timout", ("cull.timout", 3600, "cull.timeout"), "cull", "'timout'"),
    ("a misplaced key: concurrentSpawnLimit under singleuser, not hub",
     ("singleuser.concurrentSpawnLimit", 64, "hub.concurrentSpawnLimit"), "singleuser", "'concurrentSpawnLimit'"),
    ("a misplaced key: the kernel culling straight under singleuser, not in a file",
     ("singleuser.MappingKernelManager", {"cull_idle_timeout": 1200}, None), "singleuser", "'MappingKernelManager'"),
    ("a misplaced key: userPlaceholder at the top, not under scheduling",
     ("userPlaceholder", {"replicas": 8}, "scheduling.userPlaceholder"), "(top)", "'userPlaceholder'"),
    ("a wrong type: a CPU limit as a string", ("singleuser.cpu.limit", "1", None), "singleuser.cpu.limit",
     "'1' is not of type"),
]


@pytest.mark.parametrize("what, change, where, named", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_mistake_in_the_config_is_refused_where_it_is(what, change, where, named):
    path, value, replaces = change
    errors = schema_errors(chart_values(_with(path, value, remove=replaces)))
    assert errors, f"{what}: the schema accepted it"
    assert any(error.startswith(f"{where}: ") and named in error for error in errors), errors


def test_helm_merge_is_key_by_key_and_null_removes():
    assert helm_merge({"a": {"b": 1, "c": 2}, "l": [1, 2]}, {"a": {"b": 3}, "l": [9]}) == {"a": {"b": 3, "c": 2},
                                                                                               "l": [9]}
    assert helm_merge({"a": {"b": 1, "c": 2}}, {"a": {"c": None}}) == {"a": {"b": 1}}
    merged = chart_values(config())
    assert merged["singleuser"]["memory"] == config()["singleuser"]["memory"]
    assert merged["singleuser"]["storage"]["homeMountPath"] == "/home/jovyan"  # a default kept beside ours


def hub_test():
    return load("dreamloop_check_hub", REPO / "tests" / "hub" / "check_hub.py")


def test_the_kernel_culling_is_make_hub_tests_passed_the_charts_way():
    """``make hub-test`` passes --MappingKernelManager.* on the command line; the chart mounts the same as a
    Jupyter config file (singleuser.extraFiles, rendered to JSON by its extension), which the server reads."""
    files = chart_values(config())["singleuser"]["extraFiles"]
    (culling,) = [entry for entry in files.values() if "MappingKernelManager" in entry.get("data", {})]
    assert culling["mountPath"] == "/etc/jupyter/jupyter_server_config.json"  # on every Jupyter config path
    expected = {}
    for argument in hub_test().SERVER_ARGS:
        name, value = argument.removeprefix("--MappingKernelManager.").split("=")
        expected[name] = {"True": True, "False": False}.get(value, int(value) if value.isdigit() else value)
    assert culling["data"] == {"MappingKernelManager": expected}


def test_the_idle_culler_is_make_hub_tests():
    values = chart_values(config())
    timeout = re.search(r'"--timeout=(\d+)"', hub_test().HUB_CONFIG).group(1)
    assert values["cull"]["enabled"] is True and values["cull"]["timeout"] == int(timeout)
    assert values["cull"]["users"] is False  # a learner's account and home stay; only the idle server stops


def test_memory_guarantee_and_limit_have_headroom_over_the_measured_figures():
    memory = config()["singleuser"]["memory"]
    guarantee, limit = pod_memory_sizes(memory["guarantee"]), pod_memory_sizes(memory["limit"])
    workshop = (REPO / "docs" / "workshop.md").read_text(encoding="utf-8")
    section = workshop.split("## JupyterHub on Kubernetes", 1)[1]
    for figure in (f"guarantee {memory['guarantee']}", f"limit {memory['limit']}"):
        assert figure in section, f"docs/workshop.md does not say {figure!r}"
    assert guarantee >= 275 * 2**20 * 1.5  # the room bench's server and one kernel, with half again as headroom
    assert limit >= 2 * guarantee


def test_placeholders_and_the_burst():
    values = chart_values(config())
    scheduling = values["scheduling"]
    assert scheduling["userPlaceholder"]["enabled"] and scheduling["userPlaceholder"]["replicas"] > 0
    assert scheduling["podPriority"]["enabled"]  # a placeholder yields to a learner only with pod priority on
    assert scheduling["userScheduler"]["enabled"]
    assert values["prePuller"]["hook"]["enabled"] and values["prePuller"]["continuous"]["enabled"]
    assert values["hub"]["concurrentSpawnLimit"] == config()["hub"]["concurrentSpawnLimit"] > 0


def dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text(encoding="utf-8")


def test_the_image_is_what_the_chart_expects():
    values = chart_values(config())["singleuser"]
    text = dockerfile()
    assert re.search(r"^USER (\d+)$", text, re.M).group(1) == str(values["uid"])
    useradd = re.search(r"useradd (.*)", text).group(1)
    assert f"--uid {values['uid']}" in useradd and f"--gid {values['fsGid']}" in useradd
    assert f"--home-dir {values['storage']['homeMountPath']}" in useradd
    assert re.search(r'^CMD \["(.*)"\]$', text, re.M).group(1) == values["cmd"]


def test_the_image_runs_the_python_binder_and_ci_run():
    image = re.search(r"^ARG PYTHON_IMAGE=python:(\d+\.\d+)-", dockerfile(), re.M).group(1)
    assert f"python-{image}" == (REPO / ".binder" / "runtime.txt").read_text(encoding="utf-8").strip()


def test_claude_code_is_left_out_unless_asked_for():
    text = dockerfile()
    assert re.search(r'^ARG CLAUDE_CODE=""$', text, re.M)
    assert re.search(r'if \[ -n "\$CLAUDE_CODE" \]; then', text)
    assert "claude-code@$CLAUDE_CODE" in text
    assert text.count("claude-code@") == 1  # nowhere else, and no version of it pinned in the image by default


def test_the_kit_is_installed_not_editable_from_the_pins():
    install = (DEPLOY / "install-kit.sh").read_text(encoding="utf-8")
    assert "sh /tmp/dreamloop/deploy/z2jh/install-kit.sh python" in dockerfile()
    assert '--requirement "$here/requirements.txt"' in install and '--no-deps "$here/../.."' in install
    assert "pip check" in install
    assert not re.search(r"(^|\s)(-e|--editable)(\s|$)", install + dockerfile())


def pins() -> dict[str, Version]:
    found = {}
    for line in (DEPLOY / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^\s;]+)", line)
            assert match, f"deploy/z2jh/requirements.txt: {line!r} is not pinned as name==version"
            found[match.group(1).lower().replace("_", "-")] = Version(match.group(2))
    return found


def test_every_package_is_pinned_and_the_pins_satisfy_the_kit():
    pinned = pins()
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["lab"]]
    for requirement in wanted:
        name = requirement.name.lower().replace("_", "-")
        assert name in pinned, f"{requirement} is not pinned in deploy/z2jh/requirements.txt"
        assert pinned[name] in requirement.specifier, f"the pin {name}=={pinned[name]} does not satisfy {requirement}"
    assert "dreamloop" not in pinned  # the kit comes from the checkout, not an index


def test_jupyterhub_singleuser_is_the_charts_jupyterhub():
    app_version = Version(re.search(r"appVersion (\d+\.\d+\.\d+)", (CHART / "SOURCES.md").read_text()).group(1))
    pinned = pins()["jupyterhub"]
    assert (pinned.major, pinned.minor) == (app_version.major, app_version.minor)
    (wanted,) = [Requirement(line.split("#")[0]) for line in (DEPLOY / "requirements.in").read_text().splitlines()
                 if line.split("#")[0].strip()]
    assert wanted.name == "jupyterhub" and pinned in wanted.specifier
    assert pins()["ipykernel"] >= Version("7.4")  # Stop acts mid-cell from 7.4 (test_binder.py)


def test_the_post_start_hook_copies_the_images_book_into_the_home():
    values = chart_values(config())["singleuser"]
    command = values["lifecycleHooks"]["postStart"]["exec"]["command"]
    text = dockerfile()
    installed = re.search(r"install -m 0755 \S+/copy_book\.py (\S+)", text).group(1)
    book = re.search(r"copy_book\.py --from-repo \S+ (\S+)", text).group(1)
    assert command[:2] == [Path(installed).name, book] and installed.startswith("/usr/local/bin/")
    home = values["storage"]["homeMountPath"]
    assert Path(command[2]).parent == Path(home)
    url = values["defaultUrl"].removeprefix("/lab/tree/")
    assert Path(home, url).relative_to(command[2]) in copy_book.book_files(REPO)


def test_the_book_holds_what_the_chapters_read():
    files = {str(path) for path in copy_book.book_files(REPO)}
    chapters = sorted(str(path.relative_to(REPO)) for path in (REPO / "notebooks").rglob("*.ipynb")
                      if ".ipynb_checkpoints" not in path.parts)
    assert set(chapters) <= files
    assert {"notebooks/zh/glossary.md", "images/loop.svg", "images/loop.zh.svg",
            "conformance/claude-code-2.1.332.json", "tests/fixtures/claude-code-sessions/SOURCES.md"} <= files
    assert not {"notebooks/build.py", "notebooks/conftest.py"} & files  # the build's, not a learner's
    for chapter in chapters:
        for figure in re.findall(r"\((\.\./[^)\s]+\.svg)\)", (REPO / chapter).read_text(encoding="utf-8")):
            assert str(Path(chapter).parent.joinpath(figure).resolve().relative_to(REPO.resolve())) in files, figure


def test_copying_the_book_never_overwrites_a_learners_file(tmp_path, capsys):
    book = tmp_path / "book"
    assert copy_book.main(["--from-repo", str(REPO), str(book)]) == 0
    home = tmp_path / "home" / "dreamloop"
    assert copy_book.main([str(book), str(home)]) == 0
    names = copy_book.book_files(REPO)
    assert all((home / name).read_bytes() == (REPO / name).read_bytes() for name in names)
    assert f"{len(names)} file(s) copied" in capsys.readouterr().out

    chapter, deleted = home / "notebooks" / "03_query_loop.ipynb", home / "notebooks" / "01_four_step_loop.ipynb"
    chapter.write_text("the learner's work")
    deleted.unlink()
    assert copy_book.main([str(book), str(home)]) == 0
    assert chapter.read_text() == "the learner's work"                       # theirs stays
    assert deleted.read_bytes() == (REPO / "notebooks" / deleted.name).read_bytes()  # a deleted one comes back
    assert "1 file(s) copied" in capsys.readouterr().out
    assert not list(home.rglob(f"*{copy_book.PARTIAL_SUFFIX}"))


def test_copying_into_a_home_goes_on_past_a_file_in_the_way_and_never_fails(tmp_path, capsys):
    book = tmp_path / "book"
    copy_book.main(["--from-repo", str(REPO), str(book)])
    home = tmp_path / "home" / "dreamloop"
    home.mkdir(parents=True)
    (home / "images").write_text("a file where the figures' folder goes")
    left_by_a_stopped_pod = home / "notebooks" / f".00_setup_and_tour.ipynb{copy_book.PARTIAL_SUFFIX}"
    left_by_a_stopped_pod.parent.mkdir()
    left_by_a_stopped_pod.write_text("half")
    capsys.readouterr()
    assert copy_book.main([str(book), str(home)]) == 0
    out = capsys.readouterr()
    assert "images/loop.svg: not copied" in out.err
    assert (home / "notebooks" / "00_setup_and_tour.ipynb").is_file() and not left_by_a_stopped_pod.exists()
    assert copy_book.main([str(tmp_path / "nowhere"), str(home)]) == 0
    assert "no book there" in capsys.readouterr().err


def test_assembling_the_book_from_a_checkout_is_strict(tmp_path, capsys):
    assert copy_book.main(["--from-repo", str(tmp_path), str(tmp_path / "book")]) == 1
    assert "a part of the book is missing" in capsys.readouterr().err


def test_ci_runs_the_image_check():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^image-check:", makefile, re.M)
    assert "install-kit.sh" in makefile.split("image-check:", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"^make image-check$", (REPO / ".ci" / "run").read_text(encoding="utf-8"), re.M)
