"""The in-process model uses as many threads as the CPUs the process may run on."""

import os
import subprocess
import sys

import pytest

from agentui.llm.local import usable_cpus


def test_usable_cpus_is_at_least_one_and_at_most_the_machine() -> None:
    n = usable_cpus()
    assert 1 <= n <= (os.cpu_count() or n)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this OS")
def test_usable_cpus_follows_the_affinity_mask() -> None:
    cpu = sorted(os.sched_getaffinity(0))[0]
    code = (
        f"import os; os.sched_setaffinity(0, {{{cpu}}}); "
        "from agentui.llm.local import usable_cpus; print(usable_cpus())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
