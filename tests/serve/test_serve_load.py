"""A busy ``eer-ner serve``, started as a process as users start it (the tests' tiny model): a short /predict sent
while a long one runs is answered after a few model calls, not after the long one; /health and /setup answer at
once while more predictions wait than the model's routes have threads; a /predict of more words than
``--max-words`` is a 413 naming the limit; SIGTERM (as Ctrl-C) stops the server after the model call under way, not
after the long request. Every wait is bounded."""

import concurrent.futures
import itertools
import signal
import time

import pytest
from serve_processes import CONFIG, TEXTS, Backend, stop

pytestmark = pytest.mark.integration
requests = pytest.importorskip("requests")
pytest.importorskip("fastapi", reason="the serve extra is not installed: bash scripts/setup_label_studio.sh")

#: how long the long request should hold the model: its words are sized from a measured request of
#: CALIBRATION_WORDS (a fixed 2,000 words took 91 s beside a training, but under 3 s on an idle AVX-512 machine,
#: which ended it before anything could be sent beside it)
LONG_S = 15.0
CALIBRATION_WORDS = 400
#: the long request's words, whatever the machine: at least this many, at most MAX_WORDS
LEAST_WORDS = 2_000
#: the server's --max-words
MAX_WORDS = 40_000
#: more requests than the model's routes have threads (eer_plugin.serve.app.MODEL_THREADS, 40)
QUEUED = 42
#: how long /health and /setup may take while predictions wait (they waited for the long request before: 208 s
#: on the project's busy 2-core machine)
PROMPT_S = 5.0


@pytest.fixture(scope="module")
def backend(archive, tmp_path_factory):
    served = Backend(str(archive), tmp_path_factory.mktemp("load") / "work", "", "--max-words", str(MAX_WORDS))
    yield served
    stop(served.process)


def tasks(*texts: str) -> dict:
    return {"tasks": [{"id": i, "data": {"text": text}} for i, text in enumerate(texts)], "label_config": CONFIG}


def timed(method, url: str, **kwargs):
    started = time.monotonic()
    answer = requests.request(method, url, timeout=600, **kwargs)
    return answer, time.monotonic() - started


def long_text(words: int) -> str:
    return " ".join(itertools.islice(itertools.cycle(" ".join(TEXTS).split()), words))


@pytest.fixture(scope="module")
def long_words(backend) -> int:
    """The words of a request that holds this machine's model for about LONG_S seconds, measured here."""
    timed("POST", backend.url + "/predict", json=tasks(TEXTS[0]))  # the first call's set-up, not counted
    answer, took = timed("POST", backend.url + "/predict", json=tasks(long_text(CALIBRATION_WORDS)))
    assert answer.status_code == 200, answer.text
    return min(MAX_WORDS, max(LEAST_WORDS, round(CALIBRATION_WORDS * LONG_S / took)))


def test_a_short_request_is_answered_while_a_long_one_runs(backend, long_words):
    short, _ = timed("POST", backend.url + "/predict", json=tasks(TEXTS[0]))
    assert short.status_code == 200, short.text
    text = long_text(long_words)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        long = pool.submit(timed, "POST", backend.url + "/predict", json=tasks(text))
        time.sleep(3)
        assert not long.done(), long.result()[0].text[:300]
        again, waited = timed("POST", backend.url + "/predict", json=tasks(TEXTS[0]))
        assert again.status_code == 200 and again.json() == short.json()
        assert not long.done(), f"the short request waited {waited:.1f} s, for all of the long one"
        answer, took = long.result(600)
    # a few turns beside the long request's calls, not its length (before: all of it, 433 of 433 s)
    assert answer.status_code == 200 and waited < took / 3, (waited, took, answer.text[:300])
    found = answer.json()["results"][0]["result"]
    assert found and all(r["value"]["text"] == text[r["value"]["start"] : r["value"]["end"]] for r in found)


def test_health_and_setup_answer_at_once_while_predictions_wait_for_the_model(backend, long_words):
    with concurrent.futures.ThreadPoolExecutor(QUEUED + 1) as pool:
        waiting = [pool.submit(timed, "POST", backend.url + "/predict", json=tasks(long_text(long_words)))]
        time.sleep(3)  # the long request has the model: all the others wait for it, or for a thread
        waiting += [pool.submit(timed, "POST", backend.url + "/predict", json=tasks("Paris.")) for _ in range(QUEUED)]
        time.sleep(1)
        answered_while_busy = 0
        for _ in range(3):
            busy = not all(request.done() for request in waiting)
            health, took = timed("GET", backend.url + "/health")
            assert health.status_code == 200 and health.json()["status"] == "UP" and took < PROMPT_S, took
            setup, took = timed("POST", backend.url + "/setup", json={"schema": CONFIG})
            assert setup.status_code == 200 and took < PROMPT_S, took
            answered_while_busy += busy and not all(request.done() for request in waiting)
        assert answered_while_busy, "the predictions ended before /health and /setup were asked: nothing was shown"
        assert [request.result(600)[0].status_code for request in waiting] == [200] * len(waiting)


def test_a_request_of_more_words_than_the_limit_is_a_413_naming_it(backend):
    half = long_text(MAX_WORDS // 2 + 1)
    answer = requests.post(backend.url + "/predict", json=tasks(half, half), timeout=60)
    assert answer.status_code == 413 and answer.json() == {
        "error": f"POST /predict: the 2 tasks hold {2 * (MAX_WORDS // 2 + 1):,} words, more than the {MAX_WORDS:,} "
        "one request may (eer-ner serve --max-words); send fewer or shorter tasks per request, or start the backend "
        "with a higher --max-words (and raise Label Studio's ML_TIMEOUT_PREDICT to match)"
    }
    assert requests.post(backend.url + "/predict", json=tasks(TEXTS[1]), timeout=60).status_code == 200


def test_a_stopped_server_ends_after_the_model_call_under_way_not_the_long_request(archive, long_words, tmp_path):
    served = Backend(str(archive), tmp_path / "work", "", "--max-words", str(MAX_WORDS))
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            long = pool.submit(timed, "POST", served.url + "/predict", json=tasks(long_text(long_words)))
            time.sleep(3)
            assert not long.done(), long.result()[0].text[:300]
            served.process.send_signal(signal.SIGTERM)  # as Ctrl-C, or a service manager's stop
            served.process.wait(120)
            answer, took = long.result(60)
        assert answer.status_code == 503 and answer.json() == {
            "error": "POST /predict: the backend is stopping (Ctrl-C or SIGTERM); send the request again once it runs"
        }
    finally:
        stop(served.process)
    assert "Finished server process" in served.log.read_text()  # uvicorn's graceful end, then SIGTERM's own
