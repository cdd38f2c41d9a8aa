import sys; sys.path.insert(0,"tests")
import serving_check as sc, analysis, topologies
extra = eval(sys.argv[1]) if len(sys.argv) > 1 else {}
for row in sc.load_rows():
    kw = sc.conditions(row); kw.update(extra)
    fab = topologies.build(kw.pop("system")); model = kw.pop("model")
    try:
        p = analysis.serving_point(model, fab, **kw)
        mu, mg = float(row["tok_s_per_user"]), float(row["tok_s_per_gpu"])
        print(f"{row['id']:24s} user {p.tokens_per_s_user:7.2f}/{mu:7.2f} {sc.error(p.tokens_per_s_user,mu)*100:4.0f}%  gpu {p.tokens_per_s_gpu:7.1f}/{mg:7.1f} {sc.error(p.tokens_per_s_gpu,mg)*100:4.0f}%  " + " ".join(f"{k}={v*1e3:.2f}" for k,v in p.breakdown.items()))
    except Exception as e:
        print(row['id'], "ERR", e)
