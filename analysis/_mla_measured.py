"""TensorRT-LLM's MLA generation attention op on B200 and H200, as aiconfigurator measured it
(session 21; the B200's FP8 KV cache, session 22).

The decode step prices TensorRT-LLM's MLA generation kernel on Blackwell at its roofline (the
KV-cache read at the decode streaming fraction, the score math at the BF16 peak: no published
rate for Blackwell's dense MLA decode kernels) and on Hopper at FlashMLA's published "up to"
rates. aiconfigurator's collected data for TensorRT-LLM 1.2.0rc5 on one B200 and one H200 times
the attention op itself at DeepSeek's MLA shape: :data:`TRTLLM_B200_MLA_GENERATION_BF16`,
:data:`TRTLLM_H200_MLA_GENERATION_BF16`, and with an FP8 KV cache on B200,
:data:`TRTLLM_B200_MLA_GENERATION_FP8KV`. :func:`mla_generation_time` reads them (a 2-D lower
envelope, bilinear in batch and context inside the measured grid, ``None`` outside).

Collector (session 22's reading, correcting session 21's): aiconfigurator's
``collector/collect.py`` at ab8eab515 (2025-12-22 17:18, "fix: 1.2.0rc5 gen mla and
allreduce") sends TensorRT-LLM versions starting "1.1.0" or "1.2.0" to
``collector/trtllm/collect_mla_1_1rc2.py`` (its ``version_handler``), not to ``collect_mla.py``
(which asserts a BF16 KV cache): both data commits, 13669a172 (H200, 19:33) and 217a5739b (B200,
20:02), came after that fix. That file collects BF16 and FP8 KV caches (``dtype_list`` [BF16,
FP8]; FP8: ``QuantConfig(kv_cache_quant_algo=FP8)``) and, for a version above "1.2.0rc2", times
per call ``mla_rope_generation(fused_q, q_pe, latent_cache, ...)`` (the rope and the latent
cache's append; with an FP8 KV cache also the query's FP8 quantization into ``quant_q_buffer``
and the two bmm scales) then ``forward(..., AttentionInputType.generation_only)`` (the MLA
kernel), under ``benchmark_with_power`` (a CUDA graph; on SM90 with ``enable_flash_mla``).
"""

import bisect

from fabric import Parameter, SpecError

__all__ = [
    "MLA_GENERATION_HEADS",
    "MLA_GENERATION_SHAPE",
    "TRTLLM_B200_MLA_GENERATION_BF16",
    "TRTLLM_B200_MLA_GENERATION_BF16_16_HEADS",
    "TRTLLM_B200_MLA_GENERATION_FP8KV",
    "TRTLLM_B200_MLA_GENERATION_FP8KV_16_HEADS",
    "TRTLLM_H200_MLA_GENERATION_BF16",
    "TRTLLM_H200_MLA_GENERATION_BF16_16_HEADS",
    "TRTLLM_MLA_CONTEXT",
    "mla_context_max_isl",
    "mla_context_time",
    "mla_generation_parameters",
    "mla_generation_time",
]

#: The MLA shape the op was measured at (collector/trtllm/collect_mla_1_1rc2.py: ``kv_lora_rank`` 512,
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
#: (ms). What is timed (collector/trtllm/collect_mla_1_1rc2.py at ab8eab515, the module
#: docstring; session 21 had read collect_mla.py, which the collector does not run for 1.2.0):
#: the attention op of the TRTLLM backend with MLA enabled on the fused query (512 + 64 per
#: head), 64-token blocks: ``mla_rope_generation`` (the rope and latent-cache append kernel)
#: then ``forward(..., generation_only)`` (its MLA attention kernel); not the projections around
#: it (fused_a, q_b, the W_UK / W_UV batched GEMMs, o). The same file's FP8-KV rows are
#: :data:`TRTLLM_B200_MLA_GENERATION_FP8KV`. Source data, never fitted to a row of the check or
#: held-out sets.
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

#: The same op on one B200 with an FP8 KV cache (``kv_cache_dtype`` fp8: the latent cache stored
#: in FP8, the query quantized to FP8 by ``mla_rope_generation``, the MLA kernel's arithmetic in
#: FP8), the same file, rows kv_cache_dtype fp8, mla_dtype bfloat16, num_heads 128, tp_size 1,
#: isl 1 (181 points), collected by collect_mla_1_1rc2.py at ab8eab515 (module docstring).
TRTLLM_B200_MLA_GENERATION_FP8KV = {
    1: ((1, 0.0107413), (3, 0.010976), (7, 0.010816), (15, 0.011088), (31, 0.0108053), (63, 0.0110453), (127, 0.0108373), (255, 0.011104), (511, 0.012912), (1023, 0.0150613), (2047, 0.014848), (4095, 0.0169067), (8191, 0.02112), (16383, 0.027104), (32767, 0.0332213), (65535, 0.0355893), (131071, 0.0420053)),
    2: ((1, 0.0110347), (3, 0.010784), (7, 0.0109707), (15, 0.0108107), (31, 0.011152), (63, 0.011136), (127, 0.0110347), (255, 0.0110987), (511, 0.0131733), (1023, 0.01312), (2047, 0.0151573), (4095, 0.0193867), (8191, 0.022912), (16383, 0.0261813), (32767, 0.028688), (65535, 0.033648), (131071, 0.0518133)),
    4: ((1, 0.013072), (3, 0.01256), (7, 0.0111147), (15, 0.0128427), (31, 0.010976), (63, 0.0127787), (127, 0.01272), (255, 0.0127147), (511, 0.0129547), (1023, 0.0144213), (2047, 0.0169547), (4095, 0.0206027), (8191, 0.023024), (16383, 0.0272), (32767, 0.03368), (65535, 0.0506613), (131071, 0.0744)),
    8: ((1, 0.0117547), (3, 0.0127627), (7, 0.0128693), (15, 0.012912), (31, 0.0126827), (63, 0.0129173), (127, 0.0126933), (255, 0.0129867), (511, 0.015056), (1023, 0.0177707), (2047, 0.0210667), (4095, 0.0230347), (8191, 0.02552), (16383, 0.031872), (32767, 0.0478827), (65535, 0.0731413), (131071, 0.121349)),
    16: ((1, 0.0135733), (3, 0.0127467), (7, 0.0130507), (15, 0.0130453), (31, 0.0128373), (63, 0.0127893), (127, 0.012832), (255, 0.0130613), (511, 0.015072), (1023, 0.019264), (2047, 0.0213333), (4095, 0.023632), (8191, 0.0320693), (16383, 0.0489387), (32767, 0.0765227), (65535, 0.129296), (131071, 0.2348)),
    32: ((1, 0.014848), (3, 0.0148747), (7, 0.0152587), (15, 0.0147947), (31, 0.0148853), (63, 0.01488), (127, 0.0148533), (255, 0.0212427), (511, 0.022432), (1023, 0.0234987), (2047, 0.025552), (4095, 0.0337547), (8191, 0.0525707), (16383, 0.0786133), (32767, 0.131632), (65535, 0.236187), (131071, 0.447472)),
    64: ((1, 0.017136), (3, 0.0172693), (7, 0.0172747), (15, 0.0171893), (31, 0.0173973), (63, 0.017296), (127, 0.0171413), (255, 0.0171893), (511, 0.019872), (1023, 0.02312), (2047, 0.031136), (4095, 0.0488267), (8191, 0.0752), (16383, 0.128928), (32767, 0.234571), (65535, 0.445541), (131071, 0.8652)),
    128: ((1, 0.0253653), (3, 0.0250827), (7, 0.0253067), (15, 0.0251733), (31, 0.0253653), (63, 0.025408), (127, 0.0254133), (255, 0.027152), (511, 0.031344), (1023, 0.041968), (2047, 0.057888), (4095, 0.0851307), (8191, 0.138544), (16383, 0.244203), (32767, 0.454315), (65535, 0.880736), (131071, 1.72212)),
    256: ((1, 0.0438293), (3, 0.0437227), (7, 0.0441973), (15, 0.0438987), (31, 0.0437333), (63, 0.043536), (127, 0.0441333), (255, 0.0501227), (511, 0.057904), (1023, 0.072224), (2047, 0.099216), (4095, 0.154752), (8191, 0.261296), (16383, 0.473621), (32767, 0.899307), (65535, 1.74824)),
    512: ((1, 0.0784), (3, 0.0782773), (7, 0.0788747), (15, 0.0782667), (31, 0.078272), (63, 0.0785013), (127, 0.0800747), (255, 0.086048), (511, 0.0992267), (1023, 0.12464), (2047, 0.175296), (4095, 0.275035), (8191, 0.467328), (16383, 0.850613), (32767, 1.61818)),
    1024: ((1, 0.145744), (3, 0.145632), (7, 0.145797), (15, 0.145883), (31, 0.145989), (63, 0.146235), (127, 0.145291), (255, 0.155483), (511, 0.18176), (1023, 0.234325), (2047, 0.333893), (4095, 0.533573), (8191, 0.917589), (16383, 1.68178)),
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

#: The same op with 16 query heads on the GPU (DeepSeek's 128 under tensor parallelism 8: the
#: collector's ``num_heads`` 16 at ``tp_size`` 8), the same files and timing: rows num_heads 16,
#: tp_size 8, isl 1, mla_dtype bfloat16; B200 with a BF16 and with an FP8 KV cache, H200 with a
#: BF16 one (each 181 points: batch 1-1024, context 1-131071). Source data, never fitted to a row
#: of the check or held-out sets.
TRTLLM_B200_MLA_GENERATION_BF16_16_HEADS = {
    1: ((1, 0.0108693), (3, 0.0110027), (7, 0.011056), (15, 0.011008), (31, 0.0110507), (63, 0.01088), (127, 0.011008), (255, 0.0110027), (511, 0.013184), (1023, 0.013136), (2047, 0.0148267), (4095, 0.0151573), (8191, 0.0172747), (16383, 0.0232), (32767, 0.0272907), (65535, 0.0353387), (131071, 0.0537013)),
    2: ((1, 0.0109013), (3, 0.010736), (7, 0.0109813), (15, 0.0110293), (31, 0.0107947), (63, 0.0109173), (127, 0.0110347), (255, 0.0107733), (511, 0.0110827), (1023, 0.0127467), (2047, 0.0127253), (4095, 0.0169867), (8191, 0.0190187), (16383, 0.0235467), (32767, 0.0297013), (65535, 0.0527787), (131071, 0.0779893)),
    4: ((1, 0.0109333), (3, 0.0107733), (7, 0.0110187), (15, 0.0107787), (31, 0.0107733), (63, 0.0106027), (127, 0.0109653), (255, 0.0110453), (511, 0.01104), (1023, 0.01272), (2047, 0.0148747), (4095, 0.0151467), (8191, 0.0197013), (16383, 0.0260747), (32767, 0.0492213), (65535, 0.0724053), (131071, 0.127787)),
    8: ((1, 0.0108), (3, 0.01104), (7, 0.0111733), (15, 0.0111307), (31, 0.0108427), (63, 0.0109707), (127, 0.0110667), (255, 0.0107573), (511, 0.012832), (1023, 0.014944), (2047, 0.015136), (4095, 0.017216), (8191, 0.0232107), (16383, 0.0470933), (32767, 0.0745173), (65535, 0.126997), (131071, 0.229067)),
    16: ((1, 0.0110667), (3, 0.0110827), (7, 0.010816), (15, 0.0108373), (31, 0.011008), (63, 0.0114773), (127, 0.011056), (255, 0.0110293), (511, 0.0141653), (1023, 0.014448), (2047, 0.0169493), (4095, 0.0230987), (8191, 0.0455893), (16383, 0.071584), (32767, 0.129365), (65535, 0.23296), (131071, 0.434656)),
    32: ((1, 0.0129387), (3, 0.012704), (7, 0.0127413), (15, 0.012992), (31, 0.0131787), (63, 0.012736), (127, 0.013104), (255, 0.0128907), (511, 0.0148053), (1023, 0.014848), (2047, 0.0193013), (4095, 0.04376), (8191, 0.069792), (16383, 0.122827), (32767, 0.227429), (65535, 0.440576), (131071, 0.85152)),
    64: ((1, 0.014032), (3, 0.0132), (7, 0.01288), (15, 0.013056), (31, 0.0128267), (63, 0.012832), (127, 0.01304), (255, 0.013136), (511, 0.0168907), (1023, 0.0192427), (2047, 0.0441173), (4095, 0.06944), (8191, 0.12336), (16383, 0.227888), (32767, 0.441813), (65535, 0.853728), (131071, 1.67579)),
    128: ((1, 0.0148427), (3, 0.015008), (7, 0.0150187), (15, 0.0137973), (31, 0.0151627), (63, 0.0147893), (127, 0.0150027), (255, 0.0148427), (511, 0.0189067), (1023, 0.0430827), (2047, 0.070304), (4095, 0.120603), (8191, 0.226112), (16383, 0.439024), (32767, 0.84496), (65535, 1.66301), (131071, 3.296)),
    256: ((1, 0.019296), (3, 0.020448), (7, 0.0191893), (15, 0.0201707), (31, 0.0200693), (63, 0.021008), (127, 0.0203733), (255, 0.0216373), (511, 0.0436533), (1023, 0.0704427), (2047, 0.123083), (4095, 0.228597), (8191, 0.438405), (16383, 0.863173), (32767, 1.69235), (65535, 3.35541)),
    512: ((1, 0.029552), (3, 0.029312), (7, 0.0296), (15, 0.029456), (31, 0.0291253), (63, 0.029136), (127, 0.0326293), (255, 0.0458293), (511, 0.0741707), (1023, 0.126053), (2047, 0.231248), (4095, 0.441456), (8191, 0.867904), (16383, 1.74103), (32767, 3.40532)),
    1024: ((1, 0.052048), (3, 0.0517707), (7, 0.0518293), (15, 0.052096), (31, 0.051696), (63, 0.0522827), (127, 0.0600853), (255, 0.073168), (511, 0.123909), (1023, 0.221392), (2047, 0.418544), (4095, 0.817109), (8191, 1.63373), (16383, 3.30725)),
}

TRTLLM_B200_MLA_GENERATION_FP8KV_16_HEADS = {
    1: ((1, 0.0107093), (3, 0.010784), (7, 0.0109867), (15, 0.010928), (31, 0.0108053), (63, 0.01104), (127, 0.0110987), (255, 0.0110133), (511, 0.0131147), (1023, 0.0133227), (2047, 0.0131947), (4095, 0.0147253), (8191, 0.017088), (16383, 0.0191893), (32767, 0.0253547), (65535, 0.0280853), (131071, 0.0338987)),
    2: ((1, 0.010752), (3, 0.0107893), (7, 0.0108427), (15, 0.0109013), (31, 0.0108267), (63, 0.0109813), (127, 0.010832), (255, 0.010864), (511, 0.0127893), (1023, 0.01272), (2047, 0.0129707), (4095, 0.0149387), (8191, 0.0180587), (16383, 0.0215467), (32767, 0.026128), (65535, 0.0312213), (131071, 0.0468533)),
    4: ((1, 0.0110987), (3, 0.010992), (7, 0.0106773), (15, 0.010768), (31, 0.0107573), (63, 0.0108053), (127, 0.010912), (255, 0.01072), (511, 0.011104), (1023, 0.0111413), (2047, 0.013216), (4095, 0.0149173), (8191, 0.0173173), (16383, 0.0231413), (32767, 0.027088), (65535, 0.0425333), (131071, 0.0662613)),
    8: ((1, 0.0109813), (3, 0.0110027), (7, 0.0111573), (15, 0.010976), (31, 0.0107307), (63, 0.0110933), (127, 0.0109387), (255, 0.0108587), (511, 0.010944), (1023, 0.0130773), (2047, 0.0148267), (4095, 0.0150773), (8191, 0.018992), (16383, 0.0233493), (32767, 0.0417227), (65535, 0.065072), (131071, 0.107013)),
    16: ((1, 0.0108747), (3, 0.0109333), (7, 0.0110293), (15, 0.0109867), (31, 0.0114453), (63, 0.01112), (127, 0.0109333), (255, 0.0109867), (511, 0.0127307), (1023, 0.0130347), (2047, 0.0152533), (4095, 0.0189813), (8191, 0.0231893), (16383, 0.041488), (32767, 0.062944), (65535, 0.106176), (131071, 0.192795)),
    32: ((1, 0.0108), (3, 0.0111093), (7, 0.0109547), (15, 0.012688), (31, 0.0110987), (63, 0.0129813), (127, 0.01104), (255, 0.010992), (511, 0.012976), (1023, 0.0139733), (2047, 0.0168587), (4095, 0.0210027), (8191, 0.03832), (16383, 0.0622933), (32767, 0.107765), (65535, 0.198843), (131071, 0.379408)),
    64: ((1, 0.012928), (3, 0.0128107), (7, 0.0131627), (15, 0.0114987), (31, 0.0128533), (63, 0.0130773), (127, 0.0128053), (255, 0.0123947), (511, 0.0152587), (1023, 0.0171573), (2047, 0.0210187), (4095, 0.0396533), (8191, 0.0626987), (16383, 0.108443), (32767, 0.200256), (65535, 0.38), (131071, 0.739291)),
    128: ((1, 0.0132427), (3, 0.0129547), (7, 0.01304), (15, 0.013152), (31, 0.012768), (63, 0.0131733), (127, 0.0130293), (255, 0.0132213), (511, 0.0151627), (1023, 0.0192907), (2047, 0.0381653), (4095, 0.0623307), (8191, 0.107792), (16383, 0.198853), (32767, 0.37808), (65535, 0.738544), (131071, 1.45277)),
    256: ((1, 0.0170827), (3, 0.0181813), (7, 0.0171253), (15, 0.0179467), (31, 0.0180053), (63, 0.0176373), (127, 0.0183253), (255, 0.01736), (511, 0.0234347), (1023, 0.0414133), (2047, 0.0659787), (4095, 0.112789), (8191, 0.203557), (16383, 0.382949), (32767, 0.744037), (65535, 1.46987)),
    512: ((1, 0.0273387), (3, 0.0263947), (7, 0.0268), (15, 0.025408), (31, 0.0256747), (63, 0.025312), (127, 0.027488), (255, 0.0294667), (511, 0.0458453), (1023, 0.0704907), (2047, 0.117765), (4095, 0.210037), (8191, 0.393632), (16383, 0.760843), (32767, 1.49471)),
    1024: ((1, 0.0438027), (3, 0.0436533), (7, 0.0447307), (15, 0.043824), (31, 0.044688), (63, 0.0443733), (127, 0.0478613), (255, 0.0527893), (511, 0.076096), (1023, 0.120128), (2047, 0.209669), (4095, 0.381312), (8191, 0.723515), (16383, 1.41104)),
}

TRTLLM_H200_MLA_GENERATION_BF16_16_HEADS = {
    1: ((1, 0.02536), (3, 0.0251947), (7, 0.0260373), (15, 0.02536), (31, 0.0248), (63, 0.0244693), (127, 0.0263253), (255, 0.0263733), (511, 0.026688), (1023, 0.027856), (2047, 0.030112), (4095, 0.0338773), (8191, 0.0363093), (16383, 0.044416), (32767, 0.0483253), (65535, 0.062336), (131071, 0.0800427)),
    2: ((1, 0.0259147), (3, 0.0261013), (7, 0.0261013), (15, 0.0271947), (31, 0.024768), (63, 0.0239893), (127, 0.0264107), (255, 0.026912), (511, 0.0274987), (1023, 0.0295947), (2047, 0.0323733), (4095, 0.0341653), (8191, 0.038976), (16383, 0.0453707), (32767, 0.059424), (65535, 0.0767093), (131071, 0.109408)),
    4: ((1, 0.0266347), (3, 0.0264373), (7, 0.0258613), (15, 0.026), (31, 0.0255947), (63, 0.024576), (127, 0.026992), (255, 0.0267467), (511, 0.0290613), (1023, 0.0318347), (2047, 0.033552), (4095, 0.0381547), (8191, 0.044368), (16383, 0.056944), (32767, 0.074096), (65535, 0.1096), (131071, 0.175819)),
    8: ((1, 0.026912), (3, 0.0266187), (7, 0.0262933), (15, 0.026704), (31, 0.025568), (63, 0.0254347), (127, 0.0278453), (255, 0.0293867), (511, 0.0314347), (1023, 0.0341013), (2047, 0.037568), (4095, 0.0417813), (8191, 0.05728), (16383, 0.0737867), (32767, 0.108224), (65535, 0.178661), (131071, 0.308528)),
    16: ((1, 0.0283947), (3, 0.0280053), (7, 0.0288907), (15, 0.0275893), (31, 0.0271093), (63, 0.026016), (127, 0.0291893), (255, 0.0314027), (511, 0.0340907), (1023, 0.03784), (2047, 0.0443253), (4095, 0.0574773), (8191, 0.0752267), (16383, 0.108987), (32767, 0.178624), (65535, 0.311323), (131071, 0.576331)),
    32: ((1, 0.0297813), (3, 0.029952), (7, 0.0297227), (15, 0.0298133), (31, 0.0287467), (63, 0.0279787), (127, 0.0304587), (255, 0.0366027), (511, 0.0377547), (1023, 0.043696), (2047, 0.0588267), (4095, 0.0770453), (8191, 0.111659), (16383, 0.178021), (32767, 0.311435), (65535, 0.577829), (131071, 1.10373)),
    64: ((1, 0.0339573), (3, 0.0338507), (7, 0.0339147), (15, 0.0335893), (31, 0.033312), (63, 0.031824), (127, 0.034736), (255, 0.038288), (511, 0.050016), (1023, 0.0613067), (2047, 0.0806453), (4095, 0.115493), (8191, 0.184128), (16383, 0.318485), (32767, 0.582971), (65535, 1.11452), (131071, 2.16293)),
    128: ((1, 0.0412533), (3, 0.0416), (7, 0.0414773), (15, 0.0404747), (31, 0.04032), (63, 0.0393973), (127, 0.042448), (255, 0.0464533), (511, 0.0605387), (1023, 0.0784747), (2047, 0.112773), (4095, 0.180587), (8191, 0.311104), (16383, 0.602453), (32767, 1.12195), (65535, 2.17473), (131071, 4.27377)),
    256: ((1, 0.0551253), (3, 0.0552213), (7, 0.0547413), (15, 0.054032), (31, 0.053456), (63, 0.052288), (127, 0.0591307), (255, 0.0720213), (511, 0.0902613), (1023, 0.125093), (2047, 0.191973), (4095, 0.325424), (8191, 0.60752), (16383, 1.134), (32767, 2.18847), (65535, 4.29115)),
    512: ((1, 0.0834293), (3, 0.0834027), (7, 0.0824533), (15, 0.0809867), (31, 0.0796747), (63, 0.084512), (127, 0.0935627), (255, 0.110603), (511, 0.164848), (1023, 0.214037), (2047, 0.347205), (4095, 0.629184), (8191, 1.15977), (16383, 2.2141), (32767, 4.31895)),
    1024: ((1, 0.140896), (3, 0.14016), (7, 0.138645), (15, 0.137024), (31, 0.133739), (63, 0.134453), (127, 0.151616), (255, 0.185936), (511, 0.256064), (1023, 0.390896), (2047, 0.668725), (4095, 1.20531), (8191, 2.26818), (16383, 4.38142)),
}

#: The measured table of each chip it is taken for: B200 and GB200 (the same GPU) the B200's,
#: H200 its own; other chips keep the step's pricing.
_TABLES = {"b200": ("b200", TRTLLM_B200_MLA_GENERATION_BF16),
           "gb200": ("b200", TRTLLM_B200_MLA_GENERATION_BF16),
           "h200": ("h200", TRTLLM_H200_MLA_GENERATION_BF16)}

#: The measured FP8-KV table of each chip it is taken for (B200 and GB200: the B200's); other
#: chips (H200's own FP8-KV rows are not read: FlashMLA's FP8 path was not checked) keep the
#: step's pricing of an FP8 KV cache.
_FP8KV_TABLES = {"b200": ("b200-fp8kv", TRTLLM_B200_MLA_GENERATION_FP8KV),
                 "gb200": ("b200-fp8kv", TRTLLM_B200_MLA_GENERATION_FP8KV)}


#: The 16-head tables of each chip they are taken for, by KV bytes per element.
_TABLES_16_HEADS = {
    2: {"b200": ("b200-h16", TRTLLM_B200_MLA_GENERATION_BF16_16_HEADS),
        "gb200": ("b200-h16", TRTLLM_B200_MLA_GENERATION_BF16_16_HEADS),
        "h200": ("h200-h16", TRTLLM_H200_MLA_GENERATION_BF16_16_HEADS)},
    1: {"b200": ("b200-fp8kv-h16", TRTLLM_B200_MLA_GENERATION_FP8KV_16_HEADS),
        "gb200": ("b200-fp8kv-h16", TRTLLM_B200_MLA_GENERATION_FP8KV_16_HEADS)}}

#: Query heads on the GPU the generation tables were measured at (DeepSeek's 128 at tensor
#: parallelism 1 and 8).
MLA_GENERATION_HEADS = (128, 16)


def _table(chip, kv_bytes, heads=128):
    """``(key, table)`` measured for ``chip`` with a KV cache of ``kv_bytes`` per element (2:
    BF16, 1: FP8) and ``heads`` query heads on the GPU, or None."""
    if heads == 16:
        return _TABLES_16_HEADS.get(kv_bytes, {}).get(chip)
    if heads != 128:
        return None
    return {2: _TABLES, 1: _FP8KV_TABLES}.get(kv_bytes, {}).get(chip)

_SOURCES = {
    "b200": "ai-dynamo/aiconfigurator b200_sxm/mla/trtllm/1.2.0rc5/generation_mla_perf.parquet "
            "(217a5739b): TensorRT-LLM 1.2.0rc5 MLA generation attention op (rope + cache "
            "append and the MLA attention kernel), B200, BF16 KV, 128 heads on the GPU, one new "
            "token",
    "h200": "ai-dynamo/aiconfigurator h200_sxm/mla/trtllm/1.2.0rc5/generation_mla_perf.parquet "
            "(13669a172): TensorRT-LLM 1.2.0rc5 MLA generation attention op (FlashMLA's "
            "metadata, split-KV and combine kernels with the rope + cache append), H200, BF16 "
            "KV, 128 heads on the GPU, one new token",
    "b200-fp8kv": "ai-dynamo/aiconfigurator b200_sxm/mla/trtllm/1.2.0rc5/generation_mla_perf.parquet "
                  "(217a5739b; collected by collect_mla_1_1rc2.py at ab8eab515): TensorRT-LLM "
                  "1.2.0rc5 MLA generation attention op (rope + cache append with the query's FP8 "
                  "quantization, and the FP8 MLA attention kernel), B200, FP8 KV, 128 heads on the "
                  "GPU, one new token",
    "b200-h16": "ai-dynamo/aiconfigurator b200_sxm/mla/trtllm/1.2.0rc5/generation_mla_perf.parquet "
                "(217a5739b): TensorRT-LLM 1.2.0rc5 MLA generation attention op, B200, BF16 KV, "
                "16 heads on the GPU (num_heads 16, tp_size 8), one new token",
    "b200-fp8kv-h16": "ai-dynamo/aiconfigurator b200_sxm/mla/trtllm/1.2.0rc5/"
                      "generation_mla_perf.parquet (217a5739b): TensorRT-LLM 1.2.0rc5 MLA "
                      "generation attention op, B200, FP8 KV, 16 heads on the GPU (num_heads 16, "
                      "tp_size 8), one new token",
    "h200-h16": "ai-dynamo/aiconfigurator h200_sxm/mla/trtllm/1.2.0rc5/generation_mla_perf.parquet "
                "(13669a172): TensorRT-LLM 1.2.0rc5 MLA generation attention op (FlashMLA's "
                "path), H200, BF16 KV, 16 heads on the GPU (num_heads 16, tp_size 8), one new "
                "token"}


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


_ENVELOPES = {key: _envelope(table) for key, table in
              dict((*_TABLES.values(), *_FP8KV_TABLES.values(),
                    *(v for t in _TABLES_16_HEADS.values() for v in t.values()))).items()}


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
    :data:`TRTLLM_H200_MLA_GENERATION_BF16` for H200; with an FP8 KV cache, ``kv_bytes`` 1,
    :data:`TRTLLM_B200_MLA_GENERATION_FP8KV` for B200 and GB200): bilinear in batch and context
    between the grid's points of the lower envelope; ``None`` where nothing was measured
    (another chip, shape or KV format, a batch or context outside the grid).

    >>> round(mla_generation_time("b200", 128, 512, 64, 2, 256, 2047) * 1e3, 4)
    0.1405
    >>> round(mla_generation_time("gb200", 128, 512, 64, 2, 384, 2047) * 1e3, 4)
    0.1938
    >>> round(mla_generation_time("h200", 128, 512, 64, 2, 128, 2047) * 1e3, 4)
    0.1642
    >>> mla_generation_time("b300", 128, 512, 64, 2, 384, 2047) is None
    True
    >>> round(mla_generation_time("b200", 128, 512, 64, 1, 384, 2047) * 1e3, 4)   # FP8 KV
    0.1373
    >>> mla_generation_time("h200", 128, 512, 64, 1, 128, 2047) is None    # not read
    True
    >>> round(mla_generation_time("b200", 16, 512, 64, 2, 1, 2047) * 1e3, 4)   # 16 heads (tp 8):
    0.0127
    >>> # 14.83 us measured at batch 1, taken at batch 2's 12.73 (the lower envelope)
    >>> mla_generation_time("b200", 32, 512, 64, 2, 1, 2047) is None          # not read
    True
    """
    for name, v in (("batch", batch), ("context", context)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise SpecError(f"{name} must be a number >= 0, got {v!r}")
    table = _table(chip, kv_bytes, heads)
    if table is None or (kv_lora_rank, rope_dim) != MLA_GENERATION_SHAPE[1:]:
        return None
    env = _ENVELOPES[table[0]]
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


def mla_generation_parameters(chip, batch, context, kv_bytes=2, heads=128):
    """The grid points :func:`mla_generation_time` read at ``(batch, context)`` on chip
    ``chip`` with a KV cache of ``kv_bytes`` per element and ``heads`` query heads on the GPU
    as Parameters (seconds, the lower envelope's), for a step's list of the figures it used."""
    found = _table(chip, kv_bytes, heads)
    if found is None:
        return ()
    key, table = found
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
            chip_key = key.split("-")[0]
            out.append(Parameter(
                f"decode.mla_generation_time.{chip_key}."
                f"{'fp8kv' if '-fp8kv' in key else 'bf16'}"
                f"{'.h16' if key.endswith('-h16') else ''}.b{b}.c{c}", t, "s",
                f"{_SOURCES[key]}: batch {b}, {c} cached tokens: {ms:.6g} ms"
                + (f", taken at {t * 1e3:.6g} ms (a larger batch or context's time, the lower "
                   f"envelope)" if t < ms * 1e-3 else "")
                + "; bilinear in batch and context between the grid's points; taken "
                + ("for H200" if chip_key == "h200" else "for B200 and GB200")
                + " under engine='trtllm' in a CUDA graph (assumption: the rows' 2025 kernel no "
                "faster than 1.2.0rc5's)"))
    return tuple(out)


#: TensorRT-LLM 1.2.0rc5's MLA context attention op on one GPU for one prompt of ``isl`` tokens
#: at DeepSeek's MLA shape, 128 heads on the GPU: ``{(chip, kv): ((isl, milliseconds), ...)}``,
#: ``kv`` ``"bf16"`` or ``"fp8"`` (the KV cache's format). Source: the same snapshot's
#: ``context_mla_perf.parquet`` (``b200_sxm/mla/trtllm/1.2.0rc5``, 217a5739b; ``h200_sxm/...``,
#: 13669a172), rows op mla_context, kernel_source default, mla_dtype bfloat16, num_heads 128,
#: tp_size 1, batch_size 1, step 0; columns isl, latency (ms). What is timed
#: (collect_mla_1_1rc2.py at ab8eab515, the module docstring): ``forward(q, k, v, ...,
#: AttentionInputType.context_only, latent_cache=...)`` with the query, key and value already
#: projected: the op's rope, latent-cache write and causal attention over the prompt; not the
#: projections around it (the latent's up-projection to keys and values included).
TRTLLM_MLA_CONTEXT = {
    ("b200", "bf16"): ((16, 0.015152), (32, 0.0153013), (64, 0.015168), (128, 0.0173013), (256, 0.0232587), (512, 0.0414987), (1024, 0.0867253), (1536, 0.142208), (2048, 0.212565), (3072, 0.402821), (4096, 0.638677), (6144, 1.28969), (8192, 2.15865), (10240, 3.47211), (12288, 4.99445), (16384, 8.55709)),
    ("b200", "fp8"): ((16, 0.0172107), (32, 0.0189867), (64, 0.023072), (128, 0.0234827), (256, 0.02928), (512, 0.0618613), (1024, 0.118347), (1536, 0.185925), (2048, 0.258923), (3072, 0.43984), (4096, 0.658347), (6144, 1.20262), (8192, 1.94458), (10240, 2.84539), (12288, 3.89813), (16384, 6.84886)),
    ("h200", "bf16"): ((16, 0.0167093), (32, 0.0170293), (64, 0.0186987), (128, 0.0216693), (256, 0.032752), (512, 0.0591253), (1024, 0.134816), (1536, 0.240624), (2048, 0.373168), (3072, 0.741147), (4096, 1.22581), (6144, 2.82121), (8192, 5.01889), (10240, 7.60114), (12288, 10.6543), (16384, 18.9355)),
}

#: Each chip's context table key (B200 and GB200: the B200's).
_CONTEXT_CHIPS = {"b200": "b200", "gb200": "b200", "h200": "h200"}


def _envelope_1d(points):
    """``((x, ms), ...)`` as ``[(x, seconds), ...]``, each no more than a larger ``x``'s."""
    out, low = [], float("inf")
    for x, ms in sorted(points, reverse=True):
        low = min(low, ms * 1e-3)
        out.append((x, low))
    return out[::-1]


_CONTEXT_ENVELOPES = {key: _envelope_1d(pts) for key, pts in TRTLLM_MLA_CONTEXT.items()}


def mla_context_max_isl(chip, kv_bytes):
    """The longest prompt (tokens) :func:`mla_context_time` reads on chip ``chip`` with a KV
    cache of ``kv_bytes`` per element, or None where no table is stored.

    >>> mla_context_max_isl("gb200", 1), mla_context_max_isl("h200", 1)
    (16384, None)
    """
    env = _CONTEXT_ENVELOPES.get((_CONTEXT_CHIPS.get(chip), {2: "bf16", 1: "fp8"}.get(kv_bytes)))
    return None if env is None else env[-1][0]


def mla_context_time(chip, heads, kv_lora_rank, rope_dim, kv_bytes, isl):
    """Seconds of TensorRT-LLM's MLA context attention op (:data:`TRTLLM_MLA_CONTEXT`) for one
    prompt of ``isl`` tokens on chip ``chip`` with ``heads`` query heads on the GPU and a KV
    cache of ``kv_bytes`` per element (2: BF16 on B200/GB200/H200; 1: FP8 on B200/GB200): the
    lower envelope, linear in ``isl`` between the measured points; ``None`` where nothing was
    measured (another chip, shape, head count or KV format, ``isl`` outside 16-16384).

    >>> round(mla_context_time("b200", 128, 512, 64, 2, 1024) * 1e6, 1)
    86.7
    >>> round(mla_context_time("gb200", 128, 512, 64, 1, 1024) * 1e6, 1)
    118.3
    >>> mla_context_time("h200", 128, 512, 64, 1, 1024) is None
    True
    >>> round(mla_context_time("b200", 128, 512, 64, 2, 32) * 1e6, 2)  # 64 tokens' 15.17 us
    15.17
    """
    if isinstance(isl, bool) or not isinstance(isl, (int, float)) or not isl >= 1:
        raise SpecError(f"isl must be a number of tokens >= 1, got {isl!r}")
    key = (_CONTEXT_CHIPS.get(chip), {2: "bf16", 1: "fp8"}.get(kv_bytes))
    env = _CONTEXT_ENVELOPES.get(key)
    if env is None or (heads, kv_lora_rank, rope_dim) != MLA_GENERATION_SHAPE:
        return None
    xs = [x for x, _ in env]
    if not xs[0] <= isl <= xs[-1]:
        return None
    i = bisect.bisect_left(xs, isl)
    if xs[i] == isl:
        return env[i][1]
    (x0, t0), (x1, t1) = env[i - 1], env[i]
    return t0 + (t1 - t0) * (isl - x0) / (x1 - x0)
