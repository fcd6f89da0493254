"""Probe: llama-server n-gram speculation on stored feedback turns of the 1.5B (greedy)."""
import json, subprocess, sys, time, httpx
BIN="/root/.cache/cobalt/llama.cpp/0.3.36-avx512-vnni-vbmi-bf16/bin/llama-server"
MODEL="/root/.cache/cobalt/models/qwen-coder-1.5b/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
VARIANTS={
 "none": [],
 "ngram-simple-16": ["--spec-type","ngram-simple","--spec-draft-n-max","16"],
 "ngram-mod": ["--spec-type","ngram-mod","--spec-ngram-mod-n-match","8","--spec-ngram-mod-n-min","4","--spec-ngram-mod-n-max","32"],
}
prompts=json.load(open("/root/runs/spec/prompts.json"))
names=sys.argv[1:] or list(VARIANTS)
res={}
for name in names:
    log=open(f"/root/runs/spec/server-{name}.log","w")
    p=subprocess.Popen([BIN,"--model",MODEL,"--port","8099","--threads","2","--parallel","1","--ctx-size","4096","--no-webui",*VARIANTS[name]],stdout=log,stderr=subprocess.STDOUT)
    for _ in range(120):
        try:
            if httpx.get("http://127.0.0.1:8099/health",timeout=2).status_code==200: break
        except Exception: pass
        time.sleep(0.5)
    rows=[]
    for pr in prompts:
        t=time.perf_counter()
        r=httpx.post("http://127.0.0.1:8099/v1/chat/completions",json={"messages":pr["messages"],"temperature":0,"max_tokens":600,"cache_prompt":False},timeout=600).json()
        wall=time.perf_counter()-t
        tm=r.get("timings",{})
        rows.append({"sid":pr["sid"],"wall":round(wall,2),"out":r["usage"]["completion_tokens"],"prompt":r["usage"]["prompt_tokens"],
                     "pred_tps":round(tm.get("predicted_per_second",0),2),"prompt_tps":round(tm.get("prompt_per_second",0),1),
                     "draft_n":tm.get("draft_n"),"draft_acc":tm.get("draft_n_accepted"),"text":r["choices"][0]["message"]["content"]})
        print(name, {k:v for k,v in rows[-1].items() if k!="text"}, flush=True)
    p.terminate(); p.wait()
    res[name]=rows
    json.dump(res,open(f"/root/runs/spec/result-{'-'.join(names)}.json","w"),indent=1)
base=res.get("none")
for name,rows in res.items():
    dec=sum(r["out"] for r in rows); w=sum(r["wall"] for r in rows)
    same=sum(1 for a,b in zip(rows,base) if a["text"]==b["text"]) if base else None
    print(f"{name}: {dec} tokens in {w:.1f} s wall ({dec/w:.2f} tok/s end to end), identical to none: {same}/{len(rows)}")
