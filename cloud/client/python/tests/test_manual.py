"""The manual (README.md beside the package): its example runs as written and prints what the page says;
and the package installs with pip."""

import os
import re
import shutil
import subprocess
import sys

import pytest

PACKAGE_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MANUAL = os.path.join(PACKAGE_ROOT, "README.md")


def fenced_blocks(language: str):
    return re.findall(rf"```{language}\n(.*?)```", open(MANUAL, encoding="utf-8").read(), flags=re.S)


def test_the_manuals_example_runs_verbatim_and_prints_what_it_says(tenancy, tmp_path):
    cloud = tenancy.cloud
    org = cloud.admin("org.create", name="Manual")["id"]
    part = cloud.admin("machine.create", org=org, name="rover")["part_id"]
    key = cloud.admin("key.create", org=org, role="owner")
    (example,) = [block for block in fenced_blocks("python") if "asyncio.run(main())" in block]
    script = tmp_path / "example.py"
    script.write_text(example)
    env = {
        **os.environ,
        "PYTHONPATH": PACKAGE_ROOT,
        "PLATFORM_SERVICE_HOST": cloud.address,
        "PLATFORM_ORG_ID": org,
        "PLATFORM_PART_ID": part,
        "PLATFORM_API_KEY_ID": key["id"],
        "PLATFORM_API_KEY": key["key"],
    }
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    expected = re.search(r"It prints:\n\n```\n(.*?)```", open(MANUAL, encoding="utf-8").read(), flags=re.S).group(1)
    assert result.stdout == expected


def test_pip_installs_the_package_with_its_generated_code(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(PACKAGE_ROOT, source, ignore=shutil.ignore_patterns("__pycache__", "tests", "build", "*.egg-info"))
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "--no-index",
         "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    check = subprocess.run(
        [sys.executable, "-c", "import platform_sdk, platform_sdk._proto as p; print(platform_sdk.__file__); print(p.data_pb2.DESCRIPTOR.package)"],
        cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(target)}, capture_output=True, text=True, timeout=60,
    )
    assert check.returncode == 0, check.stderr
    installed_file, package = check.stdout.split()
    assert installed_file.startswith(str(target)) and package == "platform.app.data.v1"
