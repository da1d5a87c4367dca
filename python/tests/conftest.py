import os

import pytest

SEED = int(os.environ.get("ATTNLAB_TEST_SEED", "20261123"))


@pytest.fixture
def studies_dir():
    """The study binaries of the same build (ctest sets ATTNLAB_STUDIES_DIR)."""
    path = os.environ.get("ATTNLAB_STUDIES_DIR")
    if not path:
        pytest.fail("ATTNLAB_STUDIES_DIR is not set: run through ctest -L python")
    return path


def pytest_report_header(config):
    return f"seed {SEED} (ATTNLAB_TEST_SEED replays it)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test's report names the seed that replays it (pytest swallows what a module prints at import)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.sections.append(("seed", f"ATTNLAB_TEST_SEED={SEED} replays this failure"))
