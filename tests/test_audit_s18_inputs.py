"""Audit (session 18): hostile input left over from session 17.

Each test failed on main 44942ae.
"""

import pytest

import fabric
import topologies
from fabric import NodeError


@pytest.fixture(scope="module")
def sd200_without_host1():
    f = topologies.build("sd200-ultra")
    return f.without(chips=[f"chip{i}" for i in range(8, 16)])      # every chip of host1


def test_looking_up_a_failed_host_domain_names_the_failure(sd200_without_host1):
    g = sd200_without_host1
    # was a bare KeyError('host1'); Fabric.translate already said why
    with pytest.raises(NodeError, match="host domain 'host1' has failed: every chip"):
        g.host_domains["host1"]
    with pytest.raises(NodeError, match="host domain 'host1' has failed: every chip"):
        g.host_domains.build("host1")
    with pytest.raises(NodeError, match="no host domain called 'host99'; hosts: host0, host2"):
        g.host_domains["host99"]
    with pytest.raises(NodeError, match="no host domain called 3;"):
        g.host_domains[3]


def test_the_host_domains_mapping_still_behaves_as_a_mapping(sd200_without_host1):
    g = sd200_without_host1
    # a missing key is still a KeyError to code written for a mapping
    with pytest.raises(KeyError):
        g.host_domains["host1"]
    assert g.host_domains.get("host1") is None
    assert g.host_domains.get("host1", 7) == 7
    assert "host1" not in g.host_domains
    assert "host1" not in list(g.host_domains.keys())
    try:
        g.host_domains["host1"]
    except KeyError as e:                            # the message reads as text, not a repr
        assert str(e).startswith("sd200-ultra without 8 nodes: host domain 'host1'"), str(e)
    assert g.host_domains["host0"].translate(0x1000) == g.translate("host0", 0x1000)


# -- 2. a collective's size above an int64 -----------------------------------------------


@pytest.mark.parametrize("nbytes", [2**63, 2**64, 1e19, 1e30, "9223372036854775808",
                                    "8192PiB"])
@pytest.mark.parametrize("runtime", ["nccl", "ideal"])
def test_cost_refuses_a_size_above_the_int64_limit_route_has(nbytes, runtime):
    from analysis import cost
    f = topologies.build("torus:2x2")
    # was costed (57,420,895 s for 2**63 B under NCCL); route/latency refuse it
    with pytest.raises(ValueError, match=r"at most 2\*\*63 - 1 bytes \(an int64\)"):
        cost(f, "all-reduce", nbytes, runtime=runtime)


def test_cost_takes_the_largest_size_route_takes():
    from analysis import cost
    f = topologies.build("torus:2x2")
    assert cost(f, "all-reduce", 2**63 - 1).time > 0
    assert cost(f, "all-reduce", "8191PiB").time > 0


def test_an_all_to_allv_matrix_above_the_limit_is_refused():
    import numpy as np

    from analysis import cost
    f = topologies.build("torus:2x2")
    M = np.full((4, 4), 2.0**62)                       # 16 x 2**62 = 2**66 bytes in all
    np.fill_diagonal(M, 0)
    with pytest.raises(ValueError, match=r"at most 2\*\*63 - 1 bytes"):
        cost(f, "all-to-allv", M)


@pytest.mark.parametrize("size", ["9223372036854775808", "1e19", "8192PiB"])
def test_the_cost_cli_refuses_a_size_above_the_limit_in_one_line(capsys, size):
    from analysis._cli import main
    assert main(["cost", "torus:2x2", "--op", "all-reduce", "--size", size]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "at most 2**63 - 1 bytes" in err, err


# -- 3. an operation named twice in cost --op ---------------------------------------------


@pytest.mark.parametrize("ops", [["all-reduce,all-reduce"], ["all-reduce", "--op", "all-reduce"],
                                 ["all-reduce,all-gather,all-reduce"]])
def test_cost_costs_an_op_named_twice_once_as_sizes_and_report_ops_do(capsys, ops):
    import json

    from analysis._cli import main
    from analysis._report_sweeps import check_ops
    from analysis._sizes import parse_sizes
    argv = ["cost", "torus:2x2", "--runtime", "ideal", "--json", "--size", "1KiB,1KiB,4KiB",
            "--op", *ops]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    keys = [(r["op"], r["size"]) for r in rows]
    # was: 'all-reduce,all-reduce' gave each size's row twice
    assert len(keys) == len(set(keys)), keys
    named = [o for tok in ops if tok != "--op" for o in tok.split(",")]
    assert [k[0] for k in keys[::2]] == check_ops(named)          # first-named order
    assert sorted({k[1] for k in keys}) == parse_sizes("1KiB,1KiB,4KiB") == [1024, 4096]


# -- 4. a release written other than as NCCL writes it ------------------------------------


@pytest.mark.parametrize("release", ["02.30.7", "2.030.7", "2.30.07", "2.+30.7", "2.3_0.7",
                                     "2. 30.7", "2.30.\uff17", "2.\u0663\u0660.7", "+2.30.7"])
def test_a_release_not_written_as_nccl_writes_it_is_refused(release):
    from fabric import SpecError, runtime
    # was read as 2.30.7 (int() takes leading zeros, signs, '_', inner spaces, any digits)
    with pytest.raises(SpecError, match="is not of the form 2.21.5"):
        runtime(f"nccl@{release}")
    with pytest.raises(SpecError, match="is not of the form 2.21.5"):
        runtime("nccl", version=release)


@pytest.mark.parametrize("release, name", [("2.30.7", "nccl"), (" 2.21.5 ", "nccl@2.21.5"),
                                           ("2.28", "nccl@2.28.3"), ("2.20.0", None)])
def test_a_release_as_nccl_writes_it_still_reads(release, name):
    from fabric import SpecError, runtime
    if name is None:                       # 2.20.0 is a canonical string before 2.20.3
        try:
            runtime(f"nccl@{release}")
        except SpecError as e:
            assert "not of the form" not in str(e)
        return
    assert runtime(f"nccl@{release}").name == name


def test_the_cli_refuses_a_non_canonical_release_in_one_line(capsys):
    from analysis._cli import main
    assert main(["cost", "torus:2x2", "--op", "all-reduce", "--size", "1KiB",
                 "--runtime", "nccl@02.30.7"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'02.30.7' is not of the form 2.21.5" in err, err


# -- 5. a padded CUDA graph the model cannot carry -----------------------------------------


def test_decode_names_a_graph_batch_whose_collectives_pass_an_int64():
    import analysis
    f = topologies.build("sd200-ultra")
    # was: the collective's own "nbytes must be at most ..." (before session 18: priced)
    with pytest.raises(fabric.SpecError,
                       match=r"graph_batch=10{20} x tokens_per_sequence=1 = 10{20} tokens in one "
                             r"step: its expert exchange would move .* more than the 2\*\*63 - 1 "
                             r"bytes"):
        analysis.decode_step("deepseek-v3", f, batch=8, context=4096, graph_batch=10**20)


def test_the_graph_batch_bound_is_where_the_exchange_passes_an_int64():
    import analysis
    from fabric._schema import MAX_BYTES
    m = analysis.model_config("deepseek-v3")
    f = topologies.build("sd200-ultra")                  # tp=1, dp=128, ep=128: exchanges
    per_token = m.experts_per_token * m.hidden * m.activation_bytes
    last = int(MAX_BYTES // per_token)
    r = analysis.decode_step("deepseek-v3", f, batch=8, context=4096, graph_batch=last)
    assert r.time > 0 and r.time < float("inf")
    with pytest.raises(fabric.SpecError, match="graph_batch="):
        analysis.decode_step("deepseek-v3", f, batch=8, context=4096, graph_batch=last + 1)


def test_the_decode_cli_refuses_such_a_graph_batch_in_one_line(capsys):
    from analysis._cli import main
    assert main(["decode", "sd200-ultra", "--model", "deepseek-v3", "--batch", "8",
                 "--graph-batch", str(10**20)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "graph_batch=" in err and "2**63 - 1 bytes" in err, err


def test_a_huge_real_batch_still_meets_the_memory_fit_first():
    import analysis
    f = topologies.build("sd200-ultra")
    with pytest.raises(fabric.SpecError, match="a chip needs .* KV cache"):
        analysis.decode_step("deepseek-v3", f, batch=10**20, context=0)


# -- a token count whose exchange passes an int64 ------------------------------------------


@pytest.mark.parametrize("kernel", ["pplx", "all-to-allv", "deepep-normal", "deepep-low-latency",
                                    "one-sided"])
@pytest.mark.parametrize("tokens", [2**62, 2**70])
def test_moe_exchange_names_a_token_count_whose_exchange_passes_an_int64(kernel, tokens):
    import analysis
    f = topologies.build("dgx-h100")
    # was: pplx a bare MemoryError (its copy-fence window), all-to-allv cost()'s 'nbytes ...',
    # the others an answer for 2**62 tokens a rank
    with pytest.raises(fabric.SpecError, match=rf"tokens_per_rank={tokens} over 8 EP ranks "
                                               r"moves .* 2\*\*63 - 1 bytes"):
        analysis.moe_exchange(f, "deepseek-v3", tokens, 8, kernel=kernel, dispatch_bytes=1,
                              combine_bytes=2)


def test_the_moe_token_bound_is_the_all_to_allv_total_cost_takes():
    import analysis
    from analysis._moe_exchange import expert_reach
    from fabric._schema import MAX_BYTES
    f = topologies.build("dgx-h100")
    m = analysis.model_config("deepseek-v3")
    kw = {"kernel": "all-to-allv", "dispatch_bytes": 1, "combine_bytes": 2}
    r = analysis.moe_exchange(f, m, 1, 8, **kw)
    p_rank, _ = expert_reach(m.routed_experts, m.experts_per_token, 8, 1, "uniform")
    last = int(MAX_BYTES // (p_rank * 8 * 7 * max(r.dispatch_bytes, r.combine_bytes)))
    assert analysis.moe_exchange(f, m, last, 8, **kw).combine > 0      # cost() takes it too
    with pytest.raises(fabric.SpecError, match=f"tokens_per_rank={last + 1} "):
        analysis.moe_exchange(f, m, last + 1, 8, **kw)


# -- a user's own exchange kernel with fields of the wrong kind -----------------------------


@pytest.mark.parametrize("field, value", [
    ("scale_out", "no"), ("scale_out", 1), ("forwarding", None), ("pipelined", 2),
    ("local_copy", 0), ("message_header", -1), ("message_header", 1.5),
    ("message_header", True), ("message_header", "8"), ("kernels", (True, False)),
    ("syncs", (True, True)), ("kernels", [1, 1]),
])
def test_an_exchange_kernel_refuses_a_field_of_the_wrong_kind(field, value):
    import dataclasses

    from fabric import exchange_kernel
    # was accepted: scale_out='no' ran across nodes (a truthy string), a header of -1 bytes
    with pytest.raises((TypeError, ValueError), match=field):
        dataclasses.replace(exchange_kernel("deepep-low-latency"), **{field: value})
