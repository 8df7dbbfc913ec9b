"""Shared fixtures. GPU tests use the `device` fixture, which skips (with the reason: no driver,
no GPU) where there is no GPU, so the same suite runs here and on the H200."""
import os
import sys
from pathlib import Path

import pytest

import oxide

ROOT = Path(__file__).resolve().parents[3]


def pytest_report_header(config):
    reason = oxide.no_gpu_reason()
    where = f"GPU: {oxide.Device(0)!r}" if reason is None else f"GPU tests skip: {reason}"
    return [f"oxide {oxide.version()} from {Path(oxide.__file__).parent}", where]


@pytest.fixture(scope="session")
def device():
    reason = oxide.no_gpu_reason()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")
    return oxide.Device(0)


@pytest.fixture(scope="session")
def root():
    return ROOT


sys.path.insert(0, str(Path(__file__).parent))
