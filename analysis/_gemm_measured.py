"""TensorRT-LLM's attention projections and MLA batched GEMMs on B200 and H200, as aiconfigurator
measured them (session 22), and the MoE router gate's GEMM (session 25).

The decode step prices each projection GEMM of an attention block at its roofline (its weight
read at the part's bandwidth, its FLOPs at the part's rate) plus a fixed part. aiconfigurator's
collected data for TensorRT-LLM 1.2.0rc5 time those GEMMs themselves on one B200 and one H200:
:data:`TRTLLM_B200_GEMM_BF16`, :data:`TRTLLM_H200_GEMM_FP8_BLOCK` (one ``Linear.forward``),
:data:`TRTLLM_B200_MLA_BMM_BF16`, :data:`TRTLLM_H200_MLA_BMM_FP8` (the MLA absorption's batched
GEMMs). :func:`trtllm_gemm_time` and :func:`trtllm_mla_bmm_time` read them (a lower envelope in
the token count, linear in it and in the output width between the stored shapes, ``None``
outside them). The step takes them under ``engine="trtllm"`` in a CUDA graph
(:meth:`analysis._decode._Settings.attention_gemm_measured`; the router's BF16 rows,
:data:`TRTLLM_ROUTER_SHAPES`, above 16 tokens a rank: ``_Settings.router_measured``).

What is timed (ai-dynamo/aiconfigurator, collector/trtllm/collect_gemm.py and
collect_mla_bmm.py at d1fe22a67, 2025-12-16, the last change before the data were added on
2025-12-22): a ``gemm`` row is TensorRT-LLM's ``Linear(k, n, bias=False)`` with BF16 activations
``x[m, k]`` and no quantization (stored as ``bfloat16``) or ``QuantConfig(FP8_BLOCK_SCALES,
group 128)`` (``fp8_block``: the input's 1x128 FP8 quantization kernel and the block-scaled GEMM,
``FP8BlockScalesLinearMethod.apply``), ``forward(x)`` under the collector's
``benchmark_with_power`` (a CUDA graph), five such Linears with their own weights back to back
per replay (against L2 reuse) and the time divided by five; ``fp8_block`` was collected only
below SM100 at that date. An ``mla_bmm`` row is ``torch.ops.trtllm.bmm_out`` of the query's
no-rope part by ``W_UK`` (``mla_gen_pre``: ``[heads, m, 128] x [heads, 128, 512]``) or of the
attention's latent output by ``W_UV`` (``mla_gen_post``: ``[heads, m, 512] x [heads, 512,
128]``), BF16; on Hopper also ``fp8``: ``fp8_batched_quantize_1x128_permute102`` then
``fp8_block_scaling_bmm_out``, the path TensorRT-LLM's MLA takes on SM90 when ``k_b_proj_trans``
/ ``v_b_proj`` are FP8 (``tensorrt_llm/_torch/modules/attention.py``, code-index text
5666705970; on SM100 its FP8 weights are dequantized and the bmm runs BF16). Only the shapes
the DeepSeek attention block runs at ``tp = 1`` and ``tp = 8`` are stored (the fused A
projection's output of 2112 between the stored 2048 and 2560), and the router gates' of 256 and
512 outputs from 7168 (Kimi K2's 384 between them). Source data, never fitted to a
row of the check or held-out sets; the assumption that the rows' 2025 code ran these GEMMs no
faster than 1.2.0rc5's is named in each Parameter.
"""

import bisect

from fabric import Parameter, chip_spec
from fabric._units import check_choice, check_number

__all__ = [
    "MLA_BMM_SHAPE",
    "TRTLLM_B200_GEMM_BF16",
    "TRTLLM_B200_MLA_BMM_BF16",
    "TRTLLM_H200_GEMM_BF16",
    "TRTLLM_H200_GEMM_FP8_BLOCK",
    "TRTLLM_H200_MLA_BMM_FP8",
    "TRTLLM_ROUTER_SHAPES",
    "trtllm_gemm_max_rows",
    "trtllm_gemm_parameters",
    "trtllm_gemm_time",
    "trtllm_mla_bmm_time",
]

#: The MLA head shape the batched GEMMs were measured at (collect_mla_bmm.py:
#: ``qk_nope_head_dim`` 128, ``kv_lora_rank`` 512, ``v_head_dim`` 128).
MLA_BMM_SHAPE = (128, 512, 128)

#: TensorRT-LLM 1.2.0rc5's BF16 ``Linear.forward`` on one B200, ``{(n, k): ((m, milliseconds),
#: ...)}``: ai-dynamo/aiconfigurator (snapshot 095f58a5) ``aic-core/src/aiconfigurator_core/
#: systems/data/b200_sxm/gemm/trtllm/1.2.0rc5/gemm_perf.parquet`` (the data added in 217a5739b,
#: 2025-12-22), rows framework TRTLLM, version 1.2.0rc5, device "NVIDIA B200", op gemm,
#: kernel_source torch_flow, gemm_dtype bfloat16; columns m, n, k, latency (ms).
TRTLLM_B200_GEMM_BF16 = {
    (256, 7168): ((1, 0.00544213), (2, 0.0058656), (3, 0.00586667), (4, 0.00588053), (5, 0.0058432), (6, 0.005696), (7, 0.005856), (8, 0.00584213), (9, 0.0054624), (10, 0.00544853), (11, 0.00550827), (12, 0.00550933), (13, 0.00545813), (14, 0.00550613), (15, 0.00550187), (16, 0.0058752), (17, 0.00550187), (32, 0.00586453), (33, 0.0059168), (48, 0.0058592), (49, 0.0070944), (64, 0.0059232), (65, 0.00713493), (80, 0.0063168), (81, 0.00723627), (96, 0.00592427), (97, 0.0080352), (112, 0.0070912), (113, 0.0082944), (128, 0.00606827), (129, 0.00859627), (160, 0.00885973), (161, 0.007488), (192, 0.00712533), (193, 0.008464), (224, 0.007168), (225, 0.0075456), (256, 0.00740373), (257, 0.00871573), (512, 0.0087072), (513, 0.0087808), (768, 0.00790507), (769, 0.00879147), (1024, 0.0108192), (1025, 0.0103723), (1280, 0.0101045), (1281, 0.0108352), (1536, 0.0107979), (1537, 0.0108203), (1792, 0.0108277), (1793, 0.0111712), (2048, 0.0111829), (2049, 0.0107829), (2304, 0.0107904), (2305, 0.0111883), (2560, 0.0139051), (2561, 0.0132171), (2816, 0.0134976), (2817, 0.0117269), (3072, 0.0148512), (3073, 0.0144683), (3328, 0.0141056), (3329, 0.0117056), (3584, 0.0142453), (3585, 0.0140459), (3840, 0.0142976), (3841, 0.0149109), (4096, 0.0153237), (4097, 0.0127349), (4352, 0.0133472), (4353, 0.0142304), (8192, 0.0278827), (16384, 0.0507061), (32768, 0.099776)),
    (512, 7168): ((1, 0.00586027), (2, 0.005872), (3, 0.0058304), (4, 0.00587413), (5, 0.0055136), (6, 0.00584533), (7, 0.00550187), (8, 0.00588053), (9, 0.0054688), (10, 0.00582933), (11, 0.00552747), (12, 0.0058336), (13, 0.00549333), (14, 0.0058528), (15, 0.0054624), (16, 0.00591147), (17, 0.00668587), (32, 0.00590827), (33, 0.0074272), (48, 0.0069088), (49, 0.00831253), (64, 0.00612373), (65, 0.00710827), (80, 0.0071296), (81, 0.00753173), (96, 0.0074848), (97, 0.00871893), (112, 0.0085728), (113, 0.00737493), (128, 0.00733973), (129, 0.00754027), (160, 0.0077184), (161, 0.00793493), (192, 0.00772267), (193, 0.0098976), (224, 0.00954987), (225, 0.00878933), (256, 0.00872853), (257, 0.00878933), (512, 0.0108203), (513, 0.00953387), (768, 0.0108277), (769, 0.0112544), (1024, 0.011168), (1025, 0.0109963), (1280, 0.0120501), (1281, 0.0150411), (1536, 0.0165877), (1537, 0.0121227), (1792, 0.0141216), (1793, 0.0166005), (2048, 0.0147477), (2049, 0.0165472), (2304, 0.0130699), (2305, 0.0153301), (2560, 0.0158869), (2561, 0.0139467), (2816, 0.0171669), (2817, 0.0165376), (3072, 0.0170965), (3073, 0.0190603), (3328, 0.0175659), (3329, 0.0186795), (3584, 0.0206453), (3585, 0.0221355), (3840, 0.0214357), (3841, 0.021072), (4096, 0.0222581), (4097, 0.0205451), (4352, 0.0229483), (4353, 0.0227723), (8192, 0.04576), (16384, 0.0914923), (32768, 0.18109)),
    (2048, 7168): ((1, 0.00917867), (2, 0.00916267), (3, 0.00916373), (4, 0.00933227), (5, 0.0091616), (6, 0.00916693), (7, 0.0092288), (8, 0.0093184), (9, 0.0099872), (10, 0.0099968), (11, 0.0100075), (12, 0.0099904), (13, 0.0100448), (14, 0.0099232), (15, 0.0100149), (16, 0.0094304), (17, 0.0104181), (32, 0.0109131), (33, 0.0104149), (48, 0.010368), (49, 0.0104021), (64, 0.0103541), (65, 0.0101771), (80, 0.0103755), (81, 0.0104747), (96, 0.0107669), (97, 0.0107424), (112, 0.0107008), (113, 0.0107509), (128, 0.0115797), (129, 0.0113632), (160, 0.0116672), (161, 0.0142805), (192, 0.0119701), (193, 0.0120256), (224, 0.0119115), (225, 0.0120267), (256, 0.0119936), (257, 0.015392), (512, 0.0159872), (513, 0.0191467), (768, 0.0190773), (769, 0.0211221), (1024, 0.0228747), (1025, 0.0236181), (1280, 0.0274112), (1281, 0.0264085), (1536, 0.0318645), (1537, 0.0312107), (1792, 0.0398251), (1793, 0.0360555), (2048, 0.0414539), (2049, 0.0418592), (2304, 0.0437536), (2305, 0.054704), (2560, 0.0621312), (2561, 0.05736), (2816, 0.0679925), (2817, 0.0587552), (3072, 0.0735232), (3073, 0.0673365), (3328, 0.0737099), (3329, 0.070112), (3584, 0.0971243), (3585, 0.0717504), (3840, 0.0972565), (3841, 0.0849248), (4096, 0.0985536), (4097, 0.0918837), (4352, 0.0996384), (4353, 0.0997269), (8192, 0.191715), (16384, 0.341372), (32768, 0.649417)),
    (2560, 7168): ((1, 0.0101613), (2, 0.0104467), (3, 0.0105827), (4, 0.0103707), (5, 0.0104293), (6, 0.0104627), (7, 0.010388), (8, 0.0103987), (9, 0.0115067), (10, 0.0116413), (11, 0.0115853), (12, 0.0114813), (13, 0.011724), (14, 0.0116413), (15, 0.0119733), (16, 0.0103853), (17, 0.01192), (32, 0.0108893), (33, 0.0118387), (48, 0.0109973), (49, 0.0114707), (64, 0.01244), (65, 0.0114773), (80, 0.011964), (81, 0.0120227), (96, 0.0120067), (97, 0.012468), (112, 0.0119133), (113, 0.0121627), (128, 0.0128427), (129, 0.012084), (160, 0.0142627), (161, 0.0129267), (192, 0.0121653), (193, 0.0128293), (224, 0.012856), (225, 0.012792), (256, 0.0129387), (257, 0.015148), (512, 0.017356), (513, 0.0207867), (768, 0.0221173), (769, 0.0215707), (1024, 0.0270027), (1025, 0.029108), (1280, 0.033404), (1281, 0.0333853), (1536, 0.04014), (1537, 0.0385093), (1792, 0.0438027), (1793, 0.0471453), (2048, 0.0522667), (2049, 0.059424), (2304, 0.0592027), (2305, 0.065572), (2560, 0.0660933), (2561, 0.066332), (2816, 0.077588), (2817, 0.0687507), (3072, 0.07966), (3073, 0.0735093), (3328, 0.0854787), (3329, 0.0787227), (3584, 0.0891787), (3585, 0.0924907), (3840, 0.107463), (3841, 0.100873), (4096, 0.100779), (4097, 0.103705), (4352, 0.132943), (4353, 0.119232), (8192, 0.215157), (16384, 0.401552), (32768, 0.804823)),
    (3072, 1536): ((1, 0.006672), (2, 0.0061408), (3, 0.0057664), (4, 0.00576107), (5, 0.00630827), (6, 0.0058528), (7, 0.00584853), (8, 0.00579093), (9, 0.00384853), (10, 0.00386453), (11, 0.0038688), (12, 0.00386347), (13, 0.0038496), (14, 0.00386987), (15, 0.00386987), (16, 0.00386453), (17, 0.00503147), (32, 0.00394133), (33, 0.00419947), (48, 0.00413653), (49, 0.00426027), (64, 0.0042208), (65, 0.00428373), (80, 0.00426667), (81, 0.0042496), (96, 0.0042656), (97, 0.00544427), (112, 0.00504427), (113, 0.0048832), (128, 0.004624), (129, 0.0046208), (160, 0.00490347), (161, 0.00469227), (192, 0.004272), (193, 0.00510827), (224, 0.0044032), (225, 0.00459947), (256, 0.00466453), (257, 0.00503253), (512, 0.00591147), (513, 0.00659307), (768, 0.0067104), (769, 0.00754453), (1024, 0.00841707), (1025, 0.00802133), (1280, 0.0108331), (1281, 0.00973333), (1536, 0.0106347), (1537, 0.0111808), (1792, 0.0128299), (1793, 0.0135381), (2048, 0.0140363), (2049, 0.015264), (2304, 0.0150176), (2305, 0.0160128), (2560, 0.0184139), (2561, 0.0175083), (2816, 0.0193589), (2817, 0.0187211), (3072, 0.0194837), (3073, 0.0218187), (3328, 0.0218197), (3329, 0.0218763), (3584, 0.0254773), (3585, 0.0241333), (3840, 0.0246688), (3841, 0.0263947), (4096, 0.0268832), (4097, 0.0274987), (4352, 0.0275755), (4353, 0.0281248), (8192, 0.053152), (16384, 0.104302), (32768, 0.204574)),
    (16384, 1536): ((1, 0.0104533), (2, 0.0105031), (3, 0.0105511), (4, 0.0104853), (5, 0.0104498), (6, 0.0106507), (7, 0.0104676), (8, 0.0105049), (9, 0.0105102), (10, 0.0104871), (11, 0.0104569), (12, 0.0104604), (13, 0.0104622), (14, 0.0105884), (15, 0.0105564), (16, 0.0104764), (17, 0.0106524), (32, 0.0104089), (33, 0.0104498), (48, 0.0104409), (49, 0.0109298), (64, 0.0105191), (65, 0.0105013), (80, 0.0106044), (81, 0.01112), (96, 0.0116907), (97, 0.0110951), (112, 0.011232), (113, 0.0112302), (128, 0.0111076), (129, 0.0112053), (160, 0.01256), (161, 0.0123662), (192, 0.0127769), (193, 0.012544), (224, 0.0131662), (225, 0.0139556), (256, 0.0133582), (257, 0.0145209), (512, 0.0204), (513, 0.0234116), (768, 0.0303253), (769, 0.0347627), (1024, 0.0372622), (1025, 0.0425973), (1280, 0.0485973), (1281, 0.0515218), (1536, 0.0530524), (1537, 0.0555982), (1792, 0.0611893), (1793, 0.0638987), (2048, 0.0664462), (2049, 0.0727431), (2304, 0.0747947), (2305, 0.0803378), (2560, 0.0827289), (2561, 0.0897618), (2816, 0.0911093), (2817, 0.0949458), (3072, 0.0999449), (3073, 0.111049), (3328, 0.109764), (3329, 0.119568), (3584, 0.123371), (3585, 0.120398), (3840, 0.121748), (3841, 0.161435), (4096, 0.1476), (4097, 0.156812), (4352, 0.156594), (4353, 0.166606), (8192, 0.296777), (16384, 0.577138), (32768, 1.02855)),
    (51200, 1536): ((1, 0.03088), (2, 0.03088), (3, 0.0312), (4, 0.031088), (5, 0.0313653), (6, 0.031344), (7, 0.0317387), (8, 0.0312533), (9, 0.0313813), (10, 0.0310827), (11, 0.0311893), (12, 0.0311573), (13, 0.0311893), (14, 0.0314133), (15, 0.031504), (16, 0.031968), (17, 0.032096), (32, 0.032432), (33, 0.0313707), (48, 0.0329813), (49, 0.0325493), (64, 0.0332267), (65, 0.0324053), (80, 0.033552), (81, 0.0338667), (96, 0.0315627), (97, 0.0354027), (112, 0.0314347), (113, 0.0315947), (128, 0.0316427), (129, 0.0356853), (160, 0.0335467), (161, 0.0374987), (192, 0.037456), (193, 0.0374187), (224, 0.0341173), (225, 0.0331947), (256, 0.0343627), (257, 0.0398027), (512, 0.058768), (513, 0.0709813), (768, 0.086096), (769, 0.091584), (1024, 0.109419), (1025, 0.117323), (1280, 0.135157), (1281, 0.142752), (1536, 0.161093), (1537, 0.175552), (1792, 0.183861), (1793, 0.200421), (2048, 0.20528), (2049, 0.219141), (2304, 0.231307), (2305, 0.280427), (2560, 0.260224), (2561, 0.275328), (2816, 0.277307), (2817, 0.297877), (3072, 0.302528), (3073, 0.367317), (3328, 0.334021), (3329, 0.359765), (3584, 0.356149), (3585, 0.387797), (3840, 0.387504), (3841, 0.412811), (4096, 0.434528), (4097, 0.474517), (4352, 0.475515), (4353, 0.514389), (8192, 0.886683), (16384, 1.78913), (32768, 3.33255)),
    (7168, 16384): ((1, 0.0436), (2, 0.043632), (3, 0.0436533), (4, 0.0439627), (5, 0.0432907), (6, 0.0436), (7, 0.0427413), (8, 0.0436107), (9, 0.0436213), (10, 0.0435147), (11, 0.0436), (12, 0.0437173), (13, 0.0436107), (14, 0.0437173), (15, 0.0435467), (16, 0.04392), (17, 0.0440107), (32, 0.0457493), (33, 0.0452853), (48, 0.0485227), (49, 0.047568), (64, 0.04784), (65, 0.045984), (80, 0.0470987), (81, 0.044496), (96, 0.0496267), (97, 0.048176), (112, 0.0499733), (113, 0.051264), (128, 0.0455253), (129, 0.0512), (160, 0.045984), (161, 0.0557813), (192, 0.0493493), (193, 0.0565387), (224, 0.051888), (225, 0.051024), (256, 0.0513333), (257, 0.0640267), (512, 0.0913227), (513, 0.0981387), (768, 0.128459), (769, 0.129909), (1024, 0.166405), (1025, 0.161301), (1280, 0.192555), (1281, 0.226288), (1536, 0.251749), (1537, 0.246037), (1792, 0.277477), (1793, 0.288416), (2048, 0.323387), (2049, 0.311088), (2304, 0.363557), (2305, 0.353221), (2560, 0.376251), (2561, 0.409376), (2816, 0.428448), (2817, 0.448619), (3072, 0.506677), (3073, 0.492267), (3328, 0.532955), (3329, 0.527317), (3584, 0.545253), (3585, 0.531568), (3840, 0.568053), (3841, 0.57496), (4096, 0.681707), (4097, 0.616811), (4352, 0.898512), (4353, 0.619963), (8192, 1.28517), (16384, 2.47599), (32768, 4.79893)),
    (7168, 2048): ((1, 0.00749227), (2, 0.00731627), (3, 0.00708267), (4, 0.00706667), (5, 0.0070688), (6, 0.00710507), (7, 0.006976), (8, 0.00707093), (9, 0.0075488), (10, 0.00747093), (11, 0.0074816), (12, 0.00752213), (13, 0.00752), (14, 0.007488), (15, 0.00745493), (16, 0.00703467), (17, 0.0070752), (32, 0.00707733), (33, 0.00787093), (48, 0.007904), (49, 0.0079264), (64, 0.00787307), (65, 0.00801173), (80, 0.00799893), (81, 0.00786027), (96, 0.0080768), (97, 0.00866133), (112, 0.00790293), (113, 0.00790827), (128, 0.00789973), (129, 0.0091872), (160, 0.00837013), (161, 0.00990933), (192, 0.00875413), (193, 0.00958507), (224, 0.0095392), (225, 0.00942827), (256, 0.00912853), (257, 0.010384), (512, 0.0140875), (513, 0.0141088), (768, 0.0205653), (769, 0.0175061), (1024, 0.0239189), (1025, 0.0215221), (1280, 0.0262443), (1281, 0.0287275), (1536, 0.0340331), (1537, 0.0327979), (1792, 0.0379488), (1793, 0.0393664), (2048, 0.04216), (2049, 0.0419243), (2304, 0.0487659), (2305, 0.0481632), (2560, 0.0492331), (2561, 0.0545877), (2816, 0.0631904), (2817, 0.0567509), (3072, 0.0595659), (3073, 0.0627104), (3328, 0.0624149), (3329, 0.0662539), (3584, 0.0711584), (3585, 0.0720448), (3840, 0.0743541), (3841, 0.0799232), (4096, 0.0824939), (4097, 0.0933109), (4352, 0.097296), (4353, 0.0989931), (8192, 0.190622), (16384, 0.34119), (32768, 0.611255)),
}

#: The same for ``fp8_block`` (the input's quantization kernel and the block-scaled GEMM) on one
#: H200: ``h200_sxm/gemm/trtllm/1.2.0rc5/gemm_perf.parquet`` (the data added in 13669a172,
#: 2025-12-22), device "NVIDIA H200", kernel_source torch_flow, gemm_dtype fp8_block. Its
#: widest stored output is 16384: the DeepSeek query up-projection at ``tp = 1`` (24576) is
#: outside it.
TRTLLM_H200_GEMM_FP8_BLOCK = {
    (2048, 7168): ((1, 0.0139872), (2, 0.0139275), (4, 0.0139733), (8, 0.0139445), (16, 0.0140736), (32, 0.0182731), (48, 0.0134187), (64, 0.0131328), (80, 0.0243243), (96, 0.021296), (128, 0.0151488), (160, 0.0301387), (192, 0.0285685), (256, 0.01792), (384, 0.0215744), (512, 0.0240064), (768, 0.0331989), (1024, 0.039552), (2048, 0.0749728), (4096, 0.149029), (8192, 0.288441)),
    (2560, 7168): ((1, 0.0141877), (2, 0.0140096), (4, 0.0141888), (8, 0.0142443), (16, 0.0143424), (32, 0.0182123), (48, 0.0145547), (64, 0.0144075), (80, 0.0249664), (96, 0.0226347), (128, 0.0169099), (160, 0.0331467), (192, 0.0300555), (256, 0.0202741), (384, 0.0221056), (512, 0.027744), (768, 0.0388491), (1024, 0.0524843), (2048, 0.0993216), (4096, 0.171121), (8192, 0.338981)),
    (3072, 1536): ((1, 0.00640213), (2, 0.006592), (4, 0.0065856), (8, 0.00662507), (16, 0.0065888), (32, 0.00733973), (48, 0.00628587), (64, 0.0061888), (80, 0.00909867), (96, 0.00826987), (128, 0.00685333), (160, 0.0105013), (192, 0.00981013), (256, 0.00766827), (384, 0.00960427), (512, 0.010592), (768, 0.0145685), (1024, 0.0169472), (2048, 0.0299797), (4096, 0.056288), (8192, 0.107477)),
    (16384, 1536): ((1, 0.0113941), (2, 0.0112565), (4, 0.0115285), (8, 0.0114155), (16, 0.0114763), (32, 0.0121909), (48, 0.0124309), (64, 0.0124139), (80, 0.0139008), (96, 0.0135765), (128, 0.0139381), (160, 0.0229579), (192, 0.0209461), (256, 0.019232), (384, 0.0261749), (512, 0.0332896), (768, 0.0465397), (1024, 0.0611669), (2048, 0.117293), (4096, 0.228269), (8192, 0.44288)),
    (7168, 16384): ((1, 0.0361877), (2, 0.0359776), (4, 0.0356928), (8, 0.0376), (16, 0.0364213), (32, 0.0483563), (48, 0.0388043), (64, 0.0381525), (80, 0.0633941), (96, 0.0592245), (128, 0.044288), (160, 0.0889792), (192, 0.0881067), (256, 0.0664363), (384, 0.103591), (512, 0.128231), (768, 0.185701), (1024, 0.244215), (2048, 0.435419), (4096, 0.903421), (8192, 1.88549)),
    (7168, 2048): ((1, 0.0088608), (2, 0.00898347), (4, 0.00877973), (8, 0.00872533), (16, 0.00892373), (32, 0.0100821), (48, 0.009344), (64, 0.00936747), (80, 0.0125024), (96, 0.0112459), (128, 0.0102816), (160, 0.015968), (192, 0.0149515), (256, 0.0133195), (384, 0.0189653), (512, 0.0208096), (768, 0.0289739), (1024, 0.0373109), (2048, 0.069312), (4096, 0.134014), (8192, 0.263684)),
}

#: The same for ``bfloat16`` on one H200 (``torch_flow``, the rows of
#: :data:`TRTLLM_B200_GEMM_BF16`), only the router gates' shapes (256 and 512 outputs from a
#: hidden size of 7168: :data:`TRTLLM_ROUTER_SHAPES`); H200 attention blocks run FP8 block-scaled
#: GEMMs (:data:`TRTLLM_H200_GEMM_FP8_BLOCK`), the router BF16 on every chip.
TRTLLM_H200_GEMM_BF16 = {
    (256, 7168): ((1, 0.00597973), (2, 0.0059328), (4, 0.0059072), (8, 0.00604907), (16, 0.0062496), (32, 0.0063136), (48, 0.00621013), (64, 0.00632747), (80, 0.0063936), (96, 0.00644587), (128, 0.00649387), (160, 0.00655787), (192, 0.00673067), (256, 0.00776747), (384, 0.00767467), (512, 0.00884373), (768, 0.0106219), (1024, 0.0110731), (2048, 0.0157088), (4096, 0.0281077), (8192, 0.0435275)),
    (512, 7168): ((1, 0.00634027), (2, 0.00634133), (4, 0.006496), (8, 0.00650133), (16, 0.00667413), (32, 0.0068288), (48, 0.00731947), (64, 0.00681493), (80, 0.00764587), (96, 0.0074848), (128, 0.00831253), (160, 0.0089376), (192, 0.0079392), (256, 0.00936853), (384, 0.0110859), (512, 0.0113387), (768, 0.0147616), (1024, 0.0158165), (2048, 0.0266901), (4096, 0.0411691), (8192, 0.0768661)),
}

#: TensorRT-LLM 1.2.0rc5's MLA batched GEMMs on one B200, BF16, ``{(op, heads): ((tokens,
#: milliseconds), ...)}``, ``op`` ``mla_gen_pre`` (``W_UK``) or ``mla_gen_post`` (``W_UV``):
#: ``b200_sxm/mla_bmm/trtllm/1.2.0rc5/mla_bmm_perf.parquet`` (217a5739b), bmm_dtype bfloat16,
#: kernel_source default; columns num_tokens, num_heads, latency (ms).
TRTLLM_B200_MLA_BMM_BF16 = {
    ('mla_gen_pre', 128): ((1, 0.0068576), (2, 0.0069856), (4, 0.006544), (8, 0.0067104), (16, 0.0065344), (32, 0.0067232), (48, 0.0086752), (64, 0.0066528), (80, 0.0065632), (96, 0.0067776), (128, 0.008688), (160, 0.0088352), (192, 0.0106976), (256, 0.0108512), (320, 0.0128736), (384, 0.0148928), (512, 0.0188576), (768, 0.0272064), (1024, 0.0366688), (1536, 0.0485152), (2048, 0.0646112), (3072, 0.0907104), (4096, 0.117136), (6144, 0.172202), (8192, 0.225114)),
    ('mla_gen_pre', 16): ((1, 0.0044192), (2, 0.0048864), (4, 0.004256), (8, 0.0040608), (16, 0.0041568), (32, 0.0042272), (48, 0.0060288), (64, 0.0047328), (80, 0.0046976), (96, 0.0046912), (128, 0.004576), (160, 0.004784), (192, 0.0047744), (256, 0.0046528), (320, 0.0047136), (384, 0.0065824), (512, 0.0065984), (768, 0.006544), (1024, 0.00872), (1536, 0.0106464), (2048, 0.0107424), (3072, 0.0147296), (4096, 0.0189184), (6144, 0.0270304), (8192, 0.0353024)),
    ('mla_gen_post', 128): ((1, 0.0046496), (2, 0.0046272), (4, 0.0045408), (8, 0.0044352), (16, 0.0047712), (32, 0.0063168), (48, 0.0064256), (64, 0.0064896), (80, 0.0063904), (96, 0.006416), (128, 0.0066208), (160, 0.0067008), (192, 0.0084576), (256, 0.0085472), (320, 0.008736), (384, 0.0107008), (512, 0.0168352), (768, 0.0272288), (1024, 0.0349728), (1536, 0.0509024), (2048, 0.0678592), (3072, 0.08904), (4096, 0.11848), (6144, 0.17887), (8192, 0.236947), (12288, 0.345712), (16384, 0.461427), (20480, 0.572566)),
    ('mla_gen_post', 16): ((1, 0.0045216), (2, 0.00456), (4, 0.0048672), (8, 0.0046528), (16, 0.0045952), (32, 0.0044672), (48, 0.0045056), (64, 0.004544), (80, 0.004512), (96, 0.004528), (128, 0.0045216), (160, 0.004528), (192, 0.0047904), (256, 0.0045888), (320, 0.0045536), (384, 0.004992), (512, 0.004576), (768, 0.0065888), (1024, 0.0065632), (1536, 0.006688), (2048, 0.008544), (3072, 0.0106848), (4096, 0.0126112), (6144, 0.025072), (8192, 0.0310624), (12288, 0.0460736), (16384, 0.0612736), (20480, 0.0765088)),
}

#: The same on one H200, ``fp8`` (the quantize-and-permute kernel and the block-scaled bmm):
#: ``h200_sxm/mla_bmm/trtllm/1.2.0rc5/mla_bmm_perf.parquet`` (13669a172), bmm_dtype fp8.
TRTLLM_H200_MLA_BMM_FP8 = {
    ('mla_gen_pre', 128): ((1, 0.0155776), (2, 0.0167456), (4, 0.0165376), (8, 0.0162176), (16, 0.0172704), (32, 0.0193696), (48, 0.0210752), (64, 0.022096), (80, 0.0248544), (96, 0.0258336), (128, 0.0282784), (160, 0.0408768), (192, 0.0447584), (256, 0.0488096), (320, 0.0669216), (384, 0.0685728), (512, 0.0882496), (768, 0.126464), (1024, 0.165306), (1536, 0.242253), (2048, 0.320525), (3072, 0.472205), (4096, 0.624867), (6144, 0.918131), (8192, 1.20994)),
    ('mla_gen_pre', 16): ((1, 0.0080352), (2, 0.006928), (4, 0.0111936), (8, 0.0071904), (16, 0.007648), (32, 0.0078848), (48, 0.0084896), (64, 0.0084704), (80, 0.0087776), (96, 0.0097408), (128, 0.0089728), (160, 0.009984), (192, 0.0100384), (256, 0.0113792), (320, 0.012832), (384, 0.012976), (512, 0.0149856), (768, 0.0196352), (1024, 0.0247616), (1536, 0.0357984), (2048, 0.0453408), (3072, 0.0645376), (4096, 0.0851008), (6144, 0.123734), (8192, 0.163165)),
    ('mla_gen_post', 128): ((1, 0.0117184), (2, 0.0124192), (4, 0.0121504), (8, 0.0140768), (16, 0.0145568), (32, 0.017088), (48, 0.019776), (64, 0.0228096), (80, 0.0267488), (96, 0.0294528), (128, 0.0353536), (160, 0.0448608), (192, 0.0493248), (256, 0.059872), (320, 0.0752064), (384, 0.0864832), (512, 0.111584), (768, 0.161898), (1024, 0.211206), (1536, 0.31048), (2048, 0.408406), (3072, 0.608166), (4096, 0.808976), (6144, 1.1975), (8192, 1.58912), (12288, 2.36604), (16384, 3.1499), (20480, 3.92523)),
    ('mla_gen_post', 16): ((1, 0.0077184), (2, 0.007392), (4, 0.008192), (8, 0.0071136), (16, 0.0077536), (32, 0.0080832), (48, 0.0087712), (64, 0.0099584), (80, 0.0101024), (96, 0.0107392), (128, 0.010976), (160, 0.0116448), (192, 0.0124928), (256, 0.0138176), (320, 0.0155744), (384, 0.016688), (512, 0.0194624), (768, 0.025328), (1024, 0.0303264), (1536, 0.0452288), (2048, 0.0574112), (3072, 0.082768), (4096, 0.107555), (6144, 0.157398), (8192, 0.206979), (12288, 0.305846), (16384, 0.406362), (20480, 0.503622)),
}


#: Each chip's tables, by the format the GEMMs run in on that chip (an attention block's stored
#: weight format; the router gate's BF16): B200 and GB200 (the same GPU) BF16, H200 FP8
#: block-scaled and BF16 (the router's shape only); ``(key, gemm table, bmm table)``.
_TABLES = {
    ("b200", "bf16"): ("b200", TRTLLM_B200_GEMM_BF16, TRTLLM_B200_MLA_BMM_BF16),
    ("gb200", "bf16"): ("b200", TRTLLM_B200_GEMM_BF16, TRTLLM_B200_MLA_BMM_BF16),
    ("h200", "fp8-block128"): ("h200", TRTLLM_H200_GEMM_FP8_BLOCK, TRTLLM_H200_MLA_BMM_FP8),
    ("h200", "bf16"): ("h200", TRTLLM_H200_GEMM_BF16, {}),
}

#: The router gate GEMMs the tables hold, ``(outputs, inputs)``: DeepSeek-V3/R1's (256 routed
#: experts from a hidden size of 7168) and Kimi K2's (384 from 7168, read linearly in the
#: outputs between the stored 256 and 512, as the fused A projection's 2112 between 2048 and
#: 2560), which TensorRT-LLM runs as one BF16 GEMM with FP32 logits
#: (``Deepseekv3Gate.forward``: ``cublas_mm`` in the 2025 code, then ``dsv3_router_gemm_op``,
#: a dedicated kernel at 1-16 tokens for the shapes it was built for and cuBLAS otherwise:
#: :data:`analysis._decode.TRTLLM_DSV3_ROUTER_KERNEL_SHAPES`).
TRTLLM_ROUTER_SHAPES = frozenset(((256, 7168), (384, 7168)))

_SOURCES = {
    "b200": ("ai-dynamo/aiconfigurator b200_sxm/{op}/trtllm/1.2.0rc5/{op}_perf.parquet "
             "(217a5739b): TensorRT-LLM 1.2.0rc5 on one B200, {what}"),
    "h200": ("ai-dynamo/aiconfigurator h200_sxm/{op}/trtllm/1.2.0rc5/{op}_perf.parquet "
             "(13669a172): TensorRT-LLM 1.2.0rc5 on one H200, {what}"),
}


def lower_envelope(points):
    """``points`` ``((m, ms), ...)`` as ``[(m, seconds), ...]``, each time no more than any
    measurement at a larger or equal ``m`` (the lower envelope: the table's noise, e.g. a
    tile boundary's step at ``m = 257`` above ``m = 512``'s time, never makes more rows
    cheaper). Every 1-D measured table of the package (GEMMs, the MoE module, context MLA)
    is read through it.

    >>> lower_envelope([(1, 2.0), (2, 3.0), (4, 1.0)])
    [(1, 0.001), (2, 0.001), (4, 0.001)]
    """
    pts = sorted(points)
    out, low = [], float("inf")
    for m, ms in reversed(pts):
        low = min(low, ms * 1e-3)
        out.append((m, low))
    return out[::-1]


#: each table's envelopes, by the table's id (module constants: they live as long as it)
_GEMM_ENV = {id(table): {shape: lower_envelope(p) for shape, p in table.items()}
             for _, table, _ in _TABLES.values()}
_BMM_ENV = {id(table): {shape: lower_envelope(p) for shape, p in table.items()}
            for _, _, table in _TABLES.values()}
#: each envelope's row counts, for :func:`_at` (by the envelope's id: they live as long as it)
_XS = {id(env): [x for x, _ in env] for envs in (*_GEMM_ENV.values(), *_BMM_ENV.values())
       for env in envs.values()}
#: the stored output widths at each reduction, per table
_NS = {tid: {k: sorted(n for n, kk in envs if kk == k) for _, k in envs}
       for tid, envs in _GEMM_ENV.items()}


def _lerp(x0, x1, y0, y1, x):
    return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _bracket(xs, x):
    """The stored values of sorted ``xs`` around ``x``: ``(x0, x1)``, or None outside."""
    if not xs or not (xs[0] <= x <= xs[-1]):
        return None
    i = bisect.bisect_left(xs, x)
    return (xs[i], xs[i]) if xs[i] == x else (xs[i - 1], xs[i])


def _at(env, m):
    """Seconds of envelope ``env`` at ``m`` rows (linear between its points), None outside."""
    ms = _XS[id(env)]
    if not (ms[0] <= m <= ms[-1]):
        return None
    i = bisect.bisect_left(ms, m)
    if ms[i] == m:
        return env[i][1]
    (m0, t0), (m1, t1) = env[i - 1], env[i]
    return _lerp(m0, m1, t0, t1, m)


#: The rule of a GEMM's row count ``m``: a float (a numpy float32 computes as the number it
#: is; 1.5 rows is a point between two measured ones), finite: m=inf passed and 10**400 raised
#: a bare OverflowError when this was written out with is_real (session 37).
_ROWS = "a finite number of rows >= 1"


def measured_chip(chip, optional=False):
    """The name a table of measurements is read by for ``chip``, the one rule of every such
    reader (GEMMs, MLA ops, MoE modules, the engines' all-reduces): a ``fabric.ChipSpec`` by
    its own name (a chip of the user's own keeps its name: nothing measured under it), a
    name only if :data:`fabric.CHIPS` has it (a misspelt name is :func:`fabric.chip_spec`'s
    SpecError, not a silent 'nothing measured'); None only where ``optional`` (no chip).

    >>> measured_chip("b200"), measured_chip(None, optional=True)
    ('b200', None)
    >>> measured_chip("b2OO")
    Traceback (most recent call last):
    ...
    fabric.SpecError: unknown chip 'b2OO'; known: b200, b300, gb200, gb300, h100, h20, h200, h800, sd200-chip, tpu-v4
    """
    return None if chip is None and optional else chip_spec(chip).name


def _gemm_corners(chip, fmt, n, k):
    """``(envelopes, (n0, n1))``: the table's envelopes and the stored output widths around
    ``n`` at reduction ``k``, or None."""
    entry = _TABLES.get((measured_chip(chip), fmt))
    if entry is None:
        return None
    tid = id(entry[1])
    b = _bracket(_NS[tid].get(k, []), n)
    return None if b is None else (_GEMM_ENV[tid], b)


def trtllm_gemm_max_rows(chip, fmt, n, k):
    """The most rows :func:`trtllm_gemm_time` reads for ``n`` outputs and ``k`` inputs on
    ``chip`` with ``fmt`` weights (the smaller largest ``m`` of the two stored widths around
    ``n``), or None where the shape is not stored.

    >>> trtllm_gemm_max_rows("h200", "fp8-block128", 7168, 16384), trtllm_gemm_max_rows(
    ...     "b200", "bf16", 2112, 7168)
    (8192, 32768)
    """
    c = _gemm_corners(chip, fmt, n, k)
    if c is None:
        return None
    envs, (n0, n1) = c
    return min(_XS[id(envs[(nn, k)])][-1] for nn in (n0, n1))


def trtllm_gemm_time(chip, fmt, m, n, k):
    """Seconds of TensorRT-LLM's ``Linear.forward`` of ``m`` rows, ``n`` outputs and ``k``
    inputs on chip ``chip`` (a ChipSpec or a name) with weights stored in ``fmt`` (the model's part
    format: ``bf16`` on B200/GB200, ``fp8-block128`` on H200; :data:`TRTLLM_B200_GEMM_BF16`,
    :data:`TRTLLM_H200_GEMM_FP8_BLOCK`): the lower envelope in ``m``, linear in ``m`` and in
    ``n`` between the stored points (``k`` stored exactly); ``None`` where nothing was
    measured.

    >>> round(trtllm_gemm_time("b200", "bf16", 512, 7168, 16384) * 1e6, 1)
    91.3
    >>> round(trtllm_gemm_time("b200", "bf16", 384, 2112, 7168) * 1e6, 1)
    15.8
    >>> round(trtllm_gemm_time("h200", "fp8-block128", 128, 7168, 16384) * 1e6, 1)
    44.3
    >>> trtllm_gemm_time("h200", "fp8-block128", 128, 24576, 1536) is None    # n > 16384
    True
    >>> trtllm_gemm_time("b300", "bf16", 128, 7168, 16384) is None
    True
    """
    m = check_number("m", m, 1, rule=_ROWS)
    c = _gemm_corners(chip, fmt, n, k)
    if c is None:
        return None
    envs, (n0, n1) = c
    t0, t1 = (_at(envs[(nn, k)], m) for nn in (n0, n1))
    return None if t0 is None or t1 is None else _lerp(n0, n1, t0, t1, n)


def trtllm_mla_bmm_time(chip, fmt, op, heads, m, shape=MLA_BMM_SHAPE):
    """Seconds of TensorRT-LLM's MLA batched GEMM ``op`` (``"pre"``: the query by ``W_UK``;
    ``"post"``: the latent output by ``W_UV``) for ``m`` tokens and ``heads`` heads on the
    GPU, on chip ``chip`` with the attention's weights stored in ``fmt``
    (:data:`TRTLLM_B200_MLA_BMM_BF16`, :data:`TRTLLM_H200_MLA_BMM_FP8`), ``shape`` the model's
    ``(qk_nope_head_dim, kv_lora_rank, v_head_dim)``: the lower envelope in ``m``, linear
    between its points; ``None`` where nothing was measured.

    >>> round(trtllm_mla_bmm_time("b200", "bf16", "pre", 128, 384) * 1e6, 1)
    14.9
    >>> round(trtllm_mla_bmm_time("h200", "fp8-block128", "post", 128, 128) * 1e6, 1)
    35.4
    >>> trtllm_mla_bmm_time("b200", "bf16", "pre", 64, 384) is None     # heads not stored
    True
    """
    m = check_number("m", m, 1, rule=_ROWS)
    check_choice(op, "op", ("pre", "post"))
    entry = _TABLES.get((measured_chip(chip), fmt))
    if entry is None or tuple(shape) != MLA_BMM_SHAPE:
        return None
    env = _BMM_ENV[id(entry[2])].get((f"mla_gen_{op}", heads))
    return None if env is None else _at(env, m)


def trtllm_gemm_parameters(chip, fmt, uses):
    """The grid points :func:`trtllm_gemm_time` / :func:`trtllm_mla_bmm_time` read for
    ``uses``, ``(("gemm", m, n, k) | ("pre" | "post", m, heads), ...)``, as Parameters
    (seconds, the lower envelope's), for a step's list of the figures it used."""
    chip = measured_chip(chip)
    entry = _TABLES.get((chip, fmt))
    if entry is None:
        return ()
    key, gemms, bmms = entry
    out = {}

    def add(name, table_ms, env, m, what, op):
        b = _bracket([x for x, _ in env], m)
        if b is None:
            return
        for mm in dict.fromkeys(b):
            t, ms = dict(env)[mm], dict(table_ms)[mm]
            pname = f"{name}.m{mm}"
            out[pname] = Parameter(
                pname, t, "s",
                _SOURCES[key].format(op=op, what=what) + f", m = {mm}: {ms:.6g} ms"
                + (f", taken at {t * 1e3:.6g} ms (a larger m's time, the lower envelope)"
                   if t < ms * 1e-3 else "")
                + "; linear in m and n between the stored points; taken under "
                "engine='trtllm' in a CUDA graph (assumption: the rows' 2025 code no faster "
                "than 1.2.0rc5's)")

    for use in uses:
        if use[0] == "gemm":
            _, m, n, k = use
            c = _gemm_corners(chip, fmt, n, k)
            if c is None:
                continue
            for nn in dict.fromkeys(c[1]):
                add(f"decode.trtllm_gemm_time.{key}.{fmt}.n{nn}.k{k}", gemms[(nn, k)],
                    c[0][(nn, k)], m, f"Linear.forward n = {nn}, k = {k}", "gemm")
        else:
            op, m, heads = use
            table = bmms.get((f"mla_gen_{op}", heads))
            if table is None:
                continue
            add(f"decode.trtllm_mla_bmm_time.{key}.{fmt}.{op}.h{heads}", table,
                _BMM_ENV[id(bmms)][(f"mla_gen_{op}", heads)], m,
                f"MLA bmm mla_gen_{op}, {heads} heads", "mla_bmm")
    return tuple(out.values())
