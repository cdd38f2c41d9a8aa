import time, analysis, topologies
f=topologies.build("rail:servers=9,gpus=8,chip=h100")
print(f.name, f.chip, f.n_endpoints)
for ov in (0.0,1.0):
    t=time.perf_counter()
    r=analysis.decode_step("deepseek-v3",f,batch=256*72,context=2000,layout="tp=1,dp=72",dispatch_bytes=1.0,combine_bytes=2.0,overlap=ov)
    print(round(time.perf_counter()-t,2), r.time*1e3, r.breakdown, r.tokens_per_s_system/72)
