"""CI replays the counterexample corpus: fixed bugs stay fixed, documented hazards stay detected."""
import os

import pytest

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.replay import CORPUS, corpus_files, replay


def test_corpus_folder_ships_with_the_package():
    assert os.path.isdir(CORPUS)


@pytest.mark.parametrize("path", corpus_files(), ids=os.path.basename)
def test_corpus_entry(path):
    result = replay(Counterexample.load(path))
    assert result.as_expected, result.summary()
