"""``python -m eer_plugin.simulate {ee,nns,random,gold} INPUT OUTPUT.jsonl ...``: the annotation
simulators without the ``allennlp`` launcher (same options as ``allennlp eer-simulate``; see
:mod:`eer_plugin.commands.simulate_cli`)."""
import sys

from eer_plugin.commands.simulate_cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m eer_plugin.simulate"))
