"""Sweeps: grid order, identical results on every executor, and a local Dask cluster."""

import concurrent.futures
import io
import time

import pytest

from analysis import parameter_grid, sweep
from analysis._sweep import _example_cost


def _slow_first(i):
    # Earlier points take longer, so an executor finishes them last.
    time.sleep(0.02 * (5 - i))
    return i * i


def _fails_on(i, bad):
    if i in bad:
        raise ValueError(f"point {i} failed")
    return i


def test_grid_is_the_cartesian_product_last_axis_fastest():
    grid = parameter_grid(a=[1, 2], b=["xy"], c=[True])
    assert grid == [{"a": 1, "b": "xy", "c": True}, {"a": 2, "b": "xy", "c": True}]
    assert len(parameter_grid(a=range(3), b=range(4), c=range(5))) == 60


@pytest.mark.parametrize("axes, error, match", [
    ({"a": []}, ValueError, "has no values"),
    ({"a": "abc"}, TypeError, "must be a sequence"),      # a wrong kind (session 36)
    ({"a": 3}, TypeError, "must be a sequence")])
def test_grid_rejects_bad_axes(axes, error, match):
    with pytest.raises(error, match=match):
        parameter_grid(**axes)


def test_serial_sweep_over_a_mapping_and_over_points():
    assert sweep(_example_cost, {"p": [2, 3], "size": [5]}, quiet=True) == [10, 15]
    assert sweep(_example_cost, [{"p": 1, "size": 7}], quiet=True) == [7]


@pytest.mark.parametrize("make", [
    lambda: concurrent.futures.ThreadPoolExecutor(3),
    lambda: concurrent.futures.ProcessPoolExecutor(2),
])
@pytest.mark.parametrize("chunksize", [1, 2, 7])
def test_executors_give_the_serial_result(make, chunksize):
    grid = {"p": [2, 3, 5, 8], "size": [1, 10, 100]}
    serial = sweep(_example_cost, grid, quiet=True)
    with make() as ex:
        assert sweep(_example_cost, grid, executor=ex, chunksize=chunksize, quiet=True) == serial


def test_results_are_in_grid_order_not_completion_order():
    with concurrent.futures.ThreadPoolExecutor(5) as ex:
        out = sweep(_slow_first, {"i": range(5)}, executor=ex, quiet=True)
    assert out == [0, 1, 4, 9, 16]


@pytest.mark.parametrize("use_executor", [False, True])
def test_first_failing_point_in_grid_order_raises(use_executor):
    grid = {"i": range(6), "bad": [(4, 2)]}
    with concurrent.futures.ThreadPoolExecutor(3) as ex, \
            pytest.raises(ValueError, match="point 2 failed"):
        sweep(_fails_on, grid, executor=ex if use_executor else None, quiet=True)


@pytest.mark.parametrize("kwargs, exc", [({"chunksize": 0}, ValueError),
                                         ({"executor": object()}, TypeError)])
def test_rejects_bad_arguments(kwargs, exc):
    with pytest.raises(exc):
        sweep(_example_cost, {"p": [1], "size": [1]}, **kwargs)


def test_progress_goes_to_the_given_terminal_stream():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    sweep(_example_cost, {"p": [1, 2], "size": [1]}, desc="costs", stream=out)
    assert "costs [" in out.getvalue() and "2/2" in out.getvalue()
    quiet = Tty()
    sweep(_example_cost, {"p": [1, 2], "size": [1]}, stream=quiet, quiet=True)
    assert quiet.getvalue() == ""


def test_local_dask_cluster_gives_the_serial_result():
    distributed = pytest.importorskip("distributed", reason="optional extra cofabric[dask]")
    grid = {"p": [2, 3, 5], "size": [1, 10, 100, 1000]}
    serial = sweep(_example_cost, grid, quiet=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        out = sweep(_example_cost, grid, executor=client.get_executor(), chunksize=2, quiet=True)
    assert out == serial
