"""TensorRT-LLM's MLA generation attention op on B200 and H200, as aiconfigurator measured it
(session 21).

The decode step prices TensorRT-LLM's MLA generation kernel on Blackwell at its roofline (the
KV-cache read at the decode streaming fraction, the score math at the BF16 peak: no published
rate for Blackwell's dense MLA decode kernels) and on Hopper at FlashMLA's published "up to"
rates. aiconfigurator's collected data for TensorRT-LLM 1.2.0rc5 on one B200 and one H200 times
the attention op itself at DeepSeek's MLA shape: :data:`TRTLLM_B200_MLA_GENERATION_BF16`,
:data:`TRTLLM_H200_MLA_GENERATION_BF16`. :func:`mla_generation_time` reads them (a 2-D lower
envelope, bilinear in batch and context inside the measured grid, ``None`` outside).
"""

import bisect

from fabric import Parameter, SpecError

__all__ = [
    "MLA_GENERATION_SHAPE",
    "TRTLLM_B200_MLA_GENERATION_BF16",
    "TRTLLM_H200_MLA_GENERATION_BF16",
    "mla_generation_parameters",
    "mla_generation_time",
]

#: The MLA shape the op was measured at (collector/trtllm/collect_mla.py: ``kv_lora_rank`` 512,
#: ``qk_rope_head_dim`` 64, ``qk_nope_head_dim`` 128, 128 query heads on one GPU at ``tp_size``
#: 1), as ``(query heads per GPU, kv_lora_rank, qk_rope_head_dim)``.
MLA_GENERATION_SHAPE = (128, 512, 64)

#: TensorRT-LLM 1.2.0rc5's MLA generation attention op on one B200, BF16 KV cache, DeepSeek's
#: MLA shape (:data:`MLA_GENERATION_SHAPE`), one new token per sequence: ``{batch: ((context,
#: milliseconds), ...)}``, ``context`` the tokens already in each sequence's cache (the
#: collector's ``step`` = its ``input_len``, passed as ``num_cached_tokens_per_seq``; the new
#: token attends to ``context + 1``). Source: ai-dynamo/aiconfigurator (snapshot 095f58a5),
#: ``aic-core/src/aiconfigurator_core/systems/data/b200_sxm/mla/trtllm/1.2.0rc5/
#: generation_mla_perf.parquet`` (the data added in 217a5739b, 2025-12-22), rows framework
#: TRTLLM, version 1.2.0rc5, device "NVIDIA B200", op mla_generation, kernel_source default,
#: kv_cache_dtype bfloat16, num_heads 128, tp_size 1, isl 1; columns batch_size, step, latency
#: (ms). What is timed (collector/trtllm/collect_mla.py at 217a5739b: ``create_attention``
#: with the TRTLLM backend and MLA enabled, ``attn.forward`` of the fused query (512 + 64 per
#: head) with ``latent_cache`` and ``q_pe``, ``AttentionInputType.generation_only``, 64-token
#: blocks, under ``benchmark_with_power``: 10 warm-ups, 6 runs): the op's rope and latent-cache
#: append kernel and its MLA attention kernel; not the projections around it (fused_a, q_b,
#: the W_UK / W_UV batched GEMMs, o). Only BF16: that collector asserts a BF16 KV cache (the
#: file's FP8-KV rows have no collector of that date that could write them: not used). Source
#: data, never fitted to a row of the check or held-out sets.
TRTLLM_B200_MLA_GENERATION_BF16 = {
    1: ((1, 0.010832), (3, 0.010672), (7, 0.0108747), (15, 0.0114027), (31, 0.209872), (63, 0.0107093), (127, 0.0110133), (255, 0.011152), (511, 0.0128587), (1023, 0.0152), (2047, 0.0169387), (4095, 0.0190293), (8191, 0.0251467), (16383, 0.038528), (32767, 0.0338453), (65535, 0.0378027), (131071, 0.0581067)),
    2: ((1, 0.011424), (3, 0.0108533), (7, 0.0110827), (15, 0.010976), (31, 0.0110933), (63, 0.01096), (127, 0.0114027), (255, 0.0110347), (511, 0.0129973), (1023, 0.0130827), (2047, 0.0159093), (4095, 0.0225547), (8191, 0.0303413), (16383, 0.0274347), (32767, 0.031504), (65535, 0.0522453), (131071, 0.07632)),
    4: ((1, 0.011248), (3, 0.0128747), (7, 0.0128213), (15, 0.0128267), (31, 0.012832), (63, 0.0110987), (127, 0.0121493), (255, 0.01264), (511, 0.0133333), (1023, 0.0165653), (2047, 0.0193333), (4095, 0.0281973), (8191, 0.0236107), (16383, 0.0308267), (32767, 0.0488907), (65535, 0.0759307), (131071, 0.123771)),
    8: ((1, 0.012944), (3, 0.0128107), (7, 0.0128587), (15, 0.012864), (31, 0.012784), (63, 0.012736), (127, 0.0128747), (255, 0.0127573), (511, 0.0158187), (1023, 0.019648), (2047, 0.0273333), (4095, 0.0231093), (8191, 0.0290027), (16383, 0.0485547), (32767, 0.0745067), (65535, 0.123365), (131071, 0.221269)),
    16: ((1, 0.013872), (3, 0.014496), (7, 0.0144587), (15, 0.0132053), (31, 0.013008), (63, 0.0135573), (127, 0.0150827), (255, 0.0147787), (511, 0.0172053), (1023, 0.025392), (2047, 0.023184), (4095, 0.029456), (8191, 0.0497973), (16383, 0.0758773), (32767, 0.130571), (65535, 0.234635), (131071, 0.449019)),
    32: ((1, 0.0130027), (3, 0.0147893), (7, 0.01336), (15, 0.0135787), (31, 0.0129067), (63, 0.0150667), (127, 0.0132107), (255, 0.0210507), (511, 0.0213013), (1023, 0.0250933), (2047, 0.031488), (4095, 0.0517333), (8191, 0.078576), (16383, 0.131387), (32767, 0.236357), (65535, 0.450597), (131071, 0.875184)),
    64: ((1, 0.01512), (3, 0.0150933), (7, 0.0152373), (15, 0.014736), (31, 0.0148), (63, 0.0152213), (127, 0.0147467), (255, 0.0169013), (511, 0.019024), (1023, 0.0255893), (2047, 0.0455147), (4095, 0.07232), (8191, 0.12656), (16383, 0.232293), (32767, 0.447243), (65535, 0.870523), (131071, 1.7182)),
    128: ((1, 0.0194347), (3, 0.019248), (7, 0.0193013), (15, 0.0189493), (31, 0.019056), (63, 0.0191947), (127, 0.019056), (255, 0.0230613), (511, 0.03272), (1023, 0.049856), (2047, 0.0780693), (4095, 0.132075), (8191, 0.238432), (16383, 0.452725), (32767, 0.880187), (65535, 1.73277), (131071, 3.43571)),
    256: ((1, 0.030144), (3, 0.0294187), (7, 0.0299733), (15, 0.029808), (31, 0.0295413), (63, 0.0294347), (127, 0.031456), (255, 0.0437867), (511, 0.0575307), (1023, 0.0845013), (2047, 0.140528), (4095, 0.247419), (8191, 0.460101), (16383, 0.892453), (32767, 1.74517), (65535, 3.46247)),
    512: ((1, 0.0506453), (3, 0.0508373), (7, 0.05072), (15, 0.0497493), (31, 0.0510293), (63, 0.0505227), (127, 0.0530667), (255, 0.0681013), (511, 0.092896), (1023, 0.145936), (2047, 0.246997), (4095, 0.440085), (8191, 0.828432), (16383, 1.61385), (32767, 3.18225)),
    1024: ((1, 0.086752), (3, 0.0868373), (7, 0.0864907), (15, 0.086464), (31, 0.0867307), (63, 0.0869333), (127, 0.0904267), (255, 0.115296), (511, 0.168741), (1023, 0.273147), (2047, 0.473888), (4095, 0.8624), (8191, 1.64273), (16383, 3.21048)),
}

#: The same op on one H200 (FlashMLA's path: the collector's metadata sets ``enable_flash_mla``,
#: so the op is FlashMLA's tile-scheduler metadata, its split-KV kernel and its combine, with the
#: rope and cache append): ai-dynamo/aiconfigurator ``aic-core/src/aiconfigurator_core/systems/
#: data/h200_sxm/mla/trtllm/1.2.0rc5/generation_mla_perf.parquet`` (the data added in 13669a172,
#: 2025-12-22, "delete 0.20.0 database and add new data from 1.2.0rc5", the same collector),
#: device "NVIDIA H200", the same rows and columns as the B200 table's.
TRTLLM_H200_MLA_GENERATION_BF16 = {
    1: ((1, 0.0214667), (3, 0.0216587), (7, 0.0222613), (15, 0.021536), (31, 0.02136), (63, 0.0204373), (127, 0.0228427), (255, 0.0231893), (511, 0.0243147), (1023, 0.0250773), (2047, 0.028656), (4095, 0.0300213), (8191, 0.0331573), (16383, 0.037856), (32767, 0.048928), (65535, 0.06416), (131071, 0.092608)),
    2: ((1, 0.0227253), (3, 0.0222827), (7, 0.0222027), (15, 0.0217387), (31, 0.0212427), (63, 0.020512), (127, 0.023264), (255, 0.0232373), (511, 0.0252267), (1023, 0.026528), (2047, 0.0285547), (4095, 0.0322027), (8191, 0.03656), (16383, 0.04904), (32767, 0.062032), (65535, 0.0897067), (131071, 0.145429)),
    4: ((1, 0.0228693), (3, 0.0230027), (7, 0.0239253), (15, 0.022272), (31, 0.951157), (63, 0.02136), (127, 0.0248747), (255, 0.025232), (511, 0.0273013), (1023, 0.0289547), (2047, 0.0311147), (4095, 0.0367253), (8191, 0.0477493), (16383, 0.0615307), (32767, 0.089264), (65535, 0.144992), (131071, 0.253941)),
    8: ((1, 0.02472), (3, 0.0239947), (7, 0.024176), (15, 0.0277493), (31, 0.022656), (63, 0.0226027), (127, 0.0258347), (255, 0.0276267), (511, 0.0282667), (1023, 0.0322507), (2047, 0.037008), (4095, 0.0476427), (8191, 0.063392), (16383, 0.089344), (32767, 0.145835), (65535, 0.253312), (131071, 0.471211)),
    16: ((1, 0.026384), (3, 0.0265173), (7, 0.025824), (15, 0.025392), (31, 0.025504), (63, 0.0245493), (127, 0.0262453), (255, 0.0326453), (511, 0.0353813), (1023, 0.0398773), (2047, 0.050624), (4095, 0.0640853), (8191, 0.0933867), (16383, 0.147696), (32767, 0.258912), (65535, 0.475771), (131071, 0.910341)),
    32: ((1, 0.0292747), (3, 0.0316427), (7, 0.0286453), (15, 0.0287573), (31, 0.0278827), (63, 0.028064), (127, 0.0297493), (255, 0.032704), (511, 0.0466507), (1023, 0.0571093), (2047, 0.0702773), (4095, 0.0988427), (8191, 0.156395), (16383, 0.264464), (32767, 0.481893), (65535, 0.917744), (131071, 1.78787)),
    64: ((1, 0.036096), (3, 0.0359413), (7, 0.0353653), (15, 0.0356107), (31, 2.75745), (63, 0.0341547), (127, 0.036736), (255, 0.0405707), (511, 0.0517493), (1023, 0.0658987), (2047, 0.0941867), (4095, 0.150405), (8191, 0.262149), (16383, 0.495488), (32767, 0.929973), (65535, 1.78599), (131071, 3.55597)),
    128: ((1, 0.0520373), (3, 0.0524533), (7, 0.0517493), (15, 0.0513813), (31, 0.050112), (63, 0.0532053), (127, 0.059536), (255, 0.0670933), (511, 0.0799787), (1023, 0.108293), (2047, 0.164213), (4095, 0.277531), (8191, 0.500976), (16383, 0.941019), (32767, 1.81116), (65535, 3.54969), (131071, 7.13825)),
    256: ((1, 0.0891733), (3, 0.08888), (7, 0.0889973), (15, 0.0890347), (31, 0.088784), (63, 0.090592), (127, 0.0982347), (255, 0.112272), (511, 0.138704), (1023, 0.197643), (2047, 0.308091), (4095, 0.526619), (8191, 0.961845), (16383, 1.83372), (32767, 3.57238), (65535, 7.09552)),
    512: ((1, 0.157093), (3, 0.154389), (7, 0.153184), (15, 0.152235), (31, 0.151413), (63, 0.155125), (127, 0.170981), (255, 0.198), (511, 0.255909), (1023, 0.364192), (2047, 0.582715), (4095, 1.01325), (8191, 1.87087), (16383, 3.63245), (32767, 7.1134)),
    1024: ((1, 0.289931), (3, 0.283643), (7, 0.282384), (15, 0.280741), (31, 0.276155), (63, 0.279952), (127, 0.312011), (255, 0.365563), (511, 0.473573), (1023, 0.683243), (2047, 1.12044), (4095, 1.99414), (8191, 3.73262), (16383, 7.21849)),
}

#: The measured table of each chip it is taken for: B200 and GB200 (the same GPU) the B200's,
#: H200 its own; other chips keep the step's pricing.
_TABLES = {"b200": ("b200", TRTLLM_B200_MLA_GENERATION_BF16),
           "gb200": ("b200", TRTLLM_B200_MLA_GENERATION_BF16),
           "h200": ("h200", TRTLLM_H200_MLA_GENERATION_BF16)}

_SOURCES = {
    "b200": "ai-dynamo/aiconfigurator b200_sxm/mla/trtllm/1.2.0rc5/generation_mla_perf.parquet "
            "(217a5739b): TensorRT-LLM 1.2.0rc5 MLA generation attention op (rope + cache "
            "append and the MLA attention kernel), B200, BF16 KV, 128 heads on the GPU, one new "
            "token",
    "h200": "ai-dynamo/aiconfigurator h200_sxm/mla/trtllm/1.2.0rc5/generation_mla_perf.parquet "
            "(13669a172): TensorRT-LLM 1.2.0rc5 MLA generation attention op (FlashMLA's "
            "metadata, split-KV and combine kernels with the rope + cache append), H200, BF16 "
            "KV, 128 heads on the GPU, one new token"}


def _envelope(table):
    """``table`` as ``{batch: [(context, seconds), ...]}`` with each time no more than any
    measurement at a larger or equal batch and context (the 2-D lower envelope: the table's
    noise, e.g. the B200's 0.21 ms at batch 1 and context 31, never makes more work cheaper)."""
    raw = {b: dict(pts) for b, pts in table.items()}
    out = {}
    for b in sorted(raw):
        out[b] = []
        for c in sorted(raw[b]):
            t = min(ms for b2, pts in raw.items() if b2 >= b
                    for c2, ms in pts.items() if c2 >= c)
            out[b].append((c, t * 1e-3))
    return out


_ENVELOPES = {key: _envelope(table) for key, table in dict(_TABLES.values()).items()}


def _corners(env, batch, context):
    """The grid's batches and contexts around ``(batch, context)`` in envelope ``env``:
    ``((b0, b1), (c0, c1))``, or None outside the measured grid."""
    batches = sorted(env)
    if not (batches[0] <= batch <= batches[-1]):
        return None
    i = bisect.bisect_left(batches, batch)
    b1 = batches[i]
    b0 = b1 if b1 == batch else batches[i - 1]
    cs = [c for c, _ in env[b1]]            # the larger batch's contexts (a subset of b0's)
    if not (cs[0] <= context <= cs[-1]):
        return None
    j = bisect.bisect_left(cs, context)
    c1 = cs[j]
    c0 = c1 if c1 == context else cs[j - 1]
    return (b0, b1), (c0, c1)


def mla_generation_time(chip, heads, kv_lora_rank, rope_dim, kv_bytes, batch, context):
    """Seconds of TensorRT-LLM's MLA generation attention op (rope + cache append and the
    attention kernel) for ``batch`` sequences of ``context`` cached tokens and one new token
    each, on chip ``chip`` (its name) with ``heads`` query heads on the GPU, from the chip's
    table (:data:`TRTLLM_B200_MLA_GENERATION_BF16` for B200 and GB200,
    :data:`TRTLLM_H200_MLA_GENERATION_BF16` for H200): bilinear in batch and context between
    the grid's points of the lower envelope; ``None`` where nothing was measured (another chip,
    shape or KV format, a batch or context outside the grid).

    >>> round(mla_generation_time("b200", 128, 512, 64, 2, 256, 2047) * 1e3, 4)
    0.1405
    >>> round(mla_generation_time("gb200", 128, 512, 64, 2, 384, 2047) * 1e3, 4)
    0.1938
    >>> round(mla_generation_time("h200", 128, 512, 64, 2, 128, 2047) * 1e3, 4)
    0.1642
    >>> mla_generation_time("b300", 128, 512, 64, 2, 384, 2047) is None
    True
    >>> mla_generation_time("b200", 128, 512, 64, 1, 384, 2047) is None    # FP8 KV
    True
    """
    for name, v in (("batch", batch), ("context", context)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise SpecError(f"{name} must be a number >= 0, got {v!r}")
    if (chip not in _TABLES or (heads, kv_lora_rank, rope_dim) != MLA_GENERATION_SHAPE
            or kv_bytes != 2):
        return None
    env = _ENVELOPES[_TABLES[chip][0]]
    corners = _corners(env, batch, context)
    if corners is None:
        return None
    (b0, b1), (c0, c1) = corners

    def at(b, c):
        return dict(env[b])[c]

    def lerp(x0, x1, y0, y1, x):
        return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)

    lo = lerp(c0, c1, at(b0, c0), at(b0, c1), context)
    hi = lerp(c0, c1, at(b1, c0), at(b1, c1), context)
    return lerp(b0, b1, lo, hi, batch)


def mla_generation_parameters(chip, batch, context):
    """The grid points :func:`mla_generation_time` read at ``(batch, context)`` on chip
    ``chip`` as Parameters (seconds, the lower envelope's), for a step's list of the figures it
    used."""
    if chip not in _TABLES:
        return ()
    key, table = _TABLES[chip]
    env = _ENVELOPES[key]
    corners = _corners(env, batch, context)
    if corners is None:
        return ()
    (b0, b1), (c0, c1) = corners
    out = []
    for b in dict.fromkeys((b0, b1)):
        for c in dict.fromkeys((c0, c1)):
            t = dict(env[b])[c]
            ms = dict(table[b])[c]
            out.append(Parameter(
                f"decode.mla_generation_time.{key}.bf16.b{b}.c{c}", t, "s",
                f"{_SOURCES[key]}: batch {b}, {c} cached tokens: {ms:.6g} ms"
                + (f", taken at {t * 1e3:.6g} ms (a larger batch or context's time, the lower "
                   f"envelope)" if t < ms * 1e-3 else "")
                + "; bilinear in batch and context between the grid's points; taken "
                + ("for B200 and GB200" if key == "b200" else "for H200")
                + " under engine='trtllm' in a CUDA graph (assumption: the rows' 2025 kernel no "
                "faster than 1.2.0rc5's)"))
    return tuple(out)
