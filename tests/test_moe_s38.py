"""Session 38 (moe): the engines' all-reduce texts name their chips from the tables that
hold them (the session-37 whole-diff read's F13)."""

import analysis
from analysis._engine_allreduce import (
    ENGINE_ALL_REDUCES,
    TRTLLM_ALLREDUCE_CHIPS,
    VLLM_SM_VERSIONS,
)
from fabric import CHIPS


def test_vllm_generations_are_one_table_for_the_rule_and_its_text():
    # the rule engine_collective applies and the source text a step lists read one table
    # (they were a tuple in _decode and a dict here, and the text spelled both by hand)
    for name, spec in CHIPS.items():
        picked = analysis.engine_collective("vllm", name) is analysis.vllm_all_reduce
        assert picked == (spec.generation in VLLM_SM_VERSIONS), name
    text = ENGINE_ALL_REDUCES["analysis.vllm_all_reduce"].source
    for gen, sm in VLLM_SM_VERSIONS.items():
        assert gen.capitalize() in text and f"SM{sm}" in text


def test_trtllm_source_names_each_measured_chip_and_its_folder():
    text = ENGINE_ALL_REDUCES["analysis.trtllm_all_reduce"].source
    for chip in TRTLLM_ALLREDUCE_CHIPS:
        assert f"{chip}_sxm" in text and chip.upper() in text
