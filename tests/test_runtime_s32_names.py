"""A runtime named by a value of the wrong kind (session 32, runtime; ``fabric.runtime``).

STYLE's rule: a wrong kind is a TypeError, a wrong value a SpecError. ``runtime=5`` or
``runtime=True`` was an "unknown runtime" SpecError, ``runtime("nccl", version=2.28)`` read
the float as the text "2.28" (NCCL 2.28.3) while ``release_tag(2.28)`` was a SpecError: a
release is text, as "nccl@2.28" is; a date is text or a ``datetime.date``.
"""
import pytest
from degrade import built

import fabric
from analysis import cost


@pytest.mark.parametrize("name, kind", [(5, "an int"), (True, "a bool"), (None, "a NoneType"),
                                        (b"nccl", "a bytes"), (2.5, "a float")])
def test_a_runtime_of_the_wrong_kind_is_a_type_error(name, kind):
    with pytest.raises(TypeError, match=r"^runtime must be a name such as 'nccl', "
                                        rf".*, got .* \({kind}\)$"):
        fabric.runtime(name)
    if name is not None:        # cost's None is its default runtime
        with pytest.raises(TypeError, match="runtime must be a name"):
            cost(built("dgx-h100"), "all-reduce", 1024, runtime=name)


def test_a_release_of_the_wrong_kind_is_a_type_error():
    for version in (2.28, True, 2):
        with pytest.raises(TypeError, match=r"^NCCL version must be a string of the form "
                                            r"2\.21\.5, got .* \(an? (float|bool|int)\)$"):
            fabric.runtime("nccl", version=version)
        with pytest.raises(TypeError, match="NCCL version must be a string"):
            fabric.release_tag(version)
    # text still reads as before; an unknown name stays a SpecError (a wrong value)
    assert fabric.runtime("nccl", version="2.28").name == "nccl@2.28.3"
    with pytest.raises(fabric.SpecError, match="unknown runtime 'mpi'"):
        fabric.runtime("mpi")


def test_a_date_of_the_wrong_kind_is_a_type_error():
    # the number 20240919 was read as its digits (NCCL 2.23.4); a datetime.date is a date
    import datetime

    from analysis import trtllm_release_on
    for day in (20240919, True, 2024.5):
        with pytest.raises(TypeError, match=r"^date must be an ISO date as text"):
            fabric.runtime("nccl", date=day)
        with pytest.raises(TypeError, match=r"^date must be an ISO date as text"):
            fabric.nccl_release_on(day)
    with pytest.raises(TypeError, match="got 20250516 \\(an int\\)"):
        trtllm_release_on(20250516)
    assert fabric.runtime("nccl", date=datetime.date(2024, 9, 19)).name == \
        fabric.runtime("nccl", date="2024-09-19").name == "nccl@2.23.4"
    with pytest.raises(fabric.SpecError, match="is not an ISO date"):
        fabric.runtime("nccl", date="2024-9-19")
