"""``eer-ner serve`` (and Label Studio) as processes, for the integration tests of tests/serve: a free port, a
bounded wait for a process's health URL, stopping a process group, the processes of a training. Every wait is
bounded."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import requests

TOKEN = "eer-test-token-0123456789"
CONFIG = (
    '<View><Text name="text" value="$text"/><Labels name="label" toName="text"><Label value="PER"/><Label value="LOC"/>'
    '</Labels><Choices name="complete" toName="text"><Choice value="complete"/></Choices></View>'
)
TEXTS = [
    "John Smith visited New York. He met the mayor of London!",
    "Angela Merkel and Emmanuel Macron met in Paris, Berlin and Rome.",
    "  Café owners in Zürich said prices rose 3.5 percent.\nThen John left for London.  ",
    "The mayor of New York met John Smith in Berlin.",
    "Macron left Paris for Rome on Monday.",
]
TRAIN_OVERRIDES = {"trainer.num_epochs": 1, "trainer.min_steps": 0}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, process: subprocess.Popen, seconds: float, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{url}: the process ended ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.exceptions.RequestException:
            pass
        time.sleep(1)
    raise AssertionError(f"{url} not up after {seconds} s:\n{log.read_text()[-3000:]}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(20)


def processes_naming(text: str) -> List[int]:
    """The ids of the processes whose command line holds ``text`` (Linux: /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().decode("utf-8", "replace"):
                    found.append(int(entry.name))
            except OSError:  # it ended meanwhile
                pass
    return found


class Backend:
    """``eer-ner serve`` as a process, started as a user starts it; ``options``: more of its options."""

    def __init__(
        self, model: str, work: Path, label_studio: str = "", *options: str, overrides: dict = TRAIN_OVERRIDES
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = work.parent / f"{work.name}-serve-{self.port}.log"
        command = [
            sys.executable,
            "-m",
            "eer_plugin.cli",
            "serve",
            model,
            "--port",
            str(self.port),
            "--work-dir",
            str(work),
            "--train-overrides",
            json.dumps(overrides),
            *options,
        ] + (["--label-studio-url", label_studio, "--api-key", TOKEN] if label_studio else [])
        env = dict(
            os.environ,
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            TOKENIZERS_PARALLELISM="false",
            EER_PRECISION="fp32",
        )
        with open(self.log, "w") as out:
            self.process = subprocess.Popen(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        try:
            wait_for(self.url + "/health", self.process, 600, self.log)  # a busy machine: minutes
        except BaseException:
            stop(self.process)
            raise

    def get(self, path: str) -> dict:
        return requests.get(self.url + path, timeout=30).json()

    def post(self, path: str, body: dict):
        return requests.post(self.url + path, json=body, timeout=300)
