import os

import pytest


@pytest.fixture
def studies_dir():
    """The study binaries of the same build (ctest sets ATTNLAB_STUDIES_DIR)."""
    path = os.environ.get("ATTNLAB_STUDIES_DIR")
    if not path:
        pytest.fail("ATTNLAB_STUDIES_DIR is not set: run through ctest -L python")
    return path
