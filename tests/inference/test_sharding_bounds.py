"""eer-merge's reading of error records keeps no state per character of a long id (a 16-million-character input
line can carry one): the pattern reads the id possessively, and matches exactly the lines it matched."""

import json
import random
import re

from work_counter import peak_memory

from eer_plugin.inference.sharding import _ERROR_LINE, shift_error_line

#: the pattern before: the engine kept a backtracking state for every character of the id (180 bytes each)
OLD_ERROR_LINE = re.compile(r'^\{"line": (\d+)(?=, "id": (?:null|"(?:[^"\\]|\\.)*"), "error": )')


def test_the_pattern_matches_the_lines_it_matched():
    rng = random.Random(0)
    matched = 0
    for _ in range(20000):
        inner = "".join(
            rng.choice(['"', "\\", "a", " ", ",", ":", "\\\\", '\\"', "é"]) for _ in range(rng.randint(0, 8))
        )
        tail = rng.choice([', "error": "x"}', ', "error": ', ", x", '", "error": '])
        line = '{"line": 3, "id": ' + rng.choice(["null", f'"{inner}"', inner]) + tail
        old, new = OLD_ERROR_LINE.match(line), _ERROR_LINE[0].match(line)
        assert (old and old.group(1)) == (new and new.group(1)), line
        matched += old is not None
    assert matched > 2000


def test_memory_does_not_grow_with_the_length_of_an_id():
    """An id of one million characters took 180 MB to match (four million, 690 MB); now a few kilobytes."""
    line = json.dumps({"line": 3, "id": "x" * 1_000_000, "error": "bad"}) + "\n"
    shifted, peak = peak_memory(shift_error_line, line, 10)
    assert shifted.startswith('{"line": 13, "id": "xxx')
    assert peak < 3 * len(line) + 2**20  # the shifted copy of the line, not 180 bytes per character
