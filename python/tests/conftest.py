# The package's tests run against build/'s libanycl (ANYCL_LIBRARY, set by tests/run_python_tests.sh)
# or an installed package; on the device of $ANYCL_DEVICE. Without an OpenCL device they skip,
# except under CI=true, where that is a failure.
import os

import pytest

import anycl


@pytest.fixture(scope="session")
def runtime():
    try:
        return anycl.Runtime()
    except anycl.DeviceError as e:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"no OpenCL device: {e}")


def anycl_cli():
    """The anycl command of the build under test ($ANYCL_CLI)."""
    cli = os.environ.get("ANYCL_CLI")
    if not cli or not os.path.exists(cli):
        if os.environ.get("CI") == "true":
            raise RuntimeError("ANYCL_CLI must name the anycl command under CI")
        pytest.skip("ANYCL_CLI is not set (tests/run_python_tests.sh sets it)")
    return cli
