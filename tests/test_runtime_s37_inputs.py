"""fabric.runtime's and Runtime's bad input found by the read of sessions 31-36 (older-a's
OLDER-A-22, -2, -14; session 37, runtime): each was silently wrong or a bare Python error."""
import dataclasses

import pytest

from fabric import SpecError, runtime


@pytest.mark.parametrize("kw", [{"version": "2.20.5"}, {"date": "2023-07-01"}, {"version": 5}])
def test_a_runtime_with_a_release_is_refused(kw):
    # runtime(Runtime, version=...) returned the Runtime and dropped the release: nccl@2.30.7
    # priced a caller who asked for 2.20.5
    with pytest.raises(SpecError, match=r"a Runtime \('nccl'\) names its own release"):
        runtime(runtime("nccl"), **kw)
    assert runtime(runtime("nccl@2.20.5")).name == "nccl@2.20.5"


def test_a_date_for_a_runtime_without_releases_names_the_date():
    # the date was turned into a version first, so the message named a version
    with pytest.raises(SpecError, match="only the nccl runtime takes a date, not 'ideal'"):
        runtime("ideal", date="2024-09-19")


def test_a_split_table_of_the_wrong_kind_is_named():
    # 5 reached "'rule' not in q": "argument of type 'int' is not iterable"
    for bad in (5, [1], "x"):
        with pytest.raises(TypeError, match="runtime 'm': split must be a dict"):
            dataclasses.replace(runtime("nccl"), name="m", split=bad)
