#!/usr/bin/env python3
"""Converts the project's calibration set (../shared/calibration/published_runs.csv: 118 published
runs as their publishers printed them) into the runs CSV that `commscale accuracy` and
`commscale fit-step` read (include/commscale/io/training_runs.hpp), keeping every run, its source
and source location, and recording the settings the publishers' recipes state but the tables omit
(README.md beside this file cites what was read).

usage: python3 data/calibration/make_published_runs.py ../shared/calibration/published_runs.csv \
           > data/calibration/published_runs.csv
"""
import csv
import re
import sys

MODELS = {  # published name -> catalog preset or config.json beside this file
    "GPT3-5B": "gpt3-5b", "GPT3-20B": "gpt3-20b", "GPT3-175B": "gpt3-175b",
    "LLAMA2-7B": "llama2-7b", "LLAMA2-13B": "llama2-13b", "LLAMA2-70B": "llama2-70b",
    "LLAMA3-8B": "llama3-8b", "LLAMA3-70B": "llama3-70b", "LLAMA3_8B": "llama3-8b", "LLAMA3_70B": "llama3-70b",
    "LLAMA3.1_405B": "llama3-405b",
    "Nemotron-8B": "models/nemotron3-8b.json", "Nemotron-22B": "models/nemotron3-22b.json",
    "Nemotron-340B": "nemotron4-340b",
    # "w/o MTP": the table's DeepSeek-V3 without its multi-token-prediction module
    "DeepSeekV3 (w/o MTP)": "models/deepseek-v3-without-mtp.json", "DeepSeekV3 (w/ MTP)": "deepseek-v3",
    "GPT OSS 120B": "gpt-oss-120b", "Qwen3_30B_a3B": "qwen3-30b-a3b", "Qwen3_235B_a22B": "qwen3-235b-a22b",
}
for s in ("125m", "350m", "760m", "1b", "3b", "7b", "13b", "30b", "70b"):
    MODELS["MPT-" + s] = "mpt-" + s

CLUSTERS = {"H100-SXM-80GB": "dgx-h100", "B200": "dgx-b200", "GB200 (NVL72)": "gb200-nvl72",
            "GB300 (NVL72)": "gb300-nvl72", "a100_40gb": "clusters/a100-40gb-roce-1600.json"}
ACC_SHORT = {"H100-SXM-80GB": "H100", "B200": "B200", "GB200 (NVL72)": "GB200", "GB300 (NVL72)": "GB300",
             "a100_40gb": "A100-40GB"}

def dtype(p):
    p = p.split(" ")[0]  # "FP8-CS (FP8-MX)": the primary value is FP8-CS
    return {"FP8": "fp8", "FP8-CS": "fp8", "FP8-MX": "mxfp8", "BF16": "bf16", "bf16": "bf16"}[p]

# Megatron-Bridge r0.2.0 (NeMo 25.11), scripts/performance/configs/<model>/workload_base_configs.py:
# (model, accelerator, precision) -> (the recipe's layout, its other settings)
MB = "Megatron-Bridge r0.2.0 scripts/performance/configs/"
RECIPES = {
    ("LLAMA3_8B", "GB300", "fp8"): ("mbs 4", "cuda_graph_impl=local scope=full_iteration"),
    ("LLAMA3_8B", "GB200", "fp8"): ("mbs 2", "cuda_graph_impl=local scope=full_iteration"),
    ("LLAMA3_8B", "B200", "fp8"): ("mbs 2", "cuda_graph_impl=local scope=full_iteration"),
    # Llama 3 8B on H100: the config until 8aed9a229 (2025-11-21; 87aa39ce7, v0.2.0rc6's
    # llama3_8b_llm_pretrain.yaml fp8_cs), Megatron-FSDP without recompute, which the table's FSDP
    # column (8) and 25.09's row of the same plan record; that commit replaced it by full recompute
    # of 5 layers without FSDP before the r0.2.0 tag
    ("LLAMA3_8B", "H100", "fp8"): ("mbs 1 cp 1 fsdp", "use_megatron_fsdp=True before 8aed9a229 (the tag: 5 layers recomputed, no FSDP)"),
    ("LLAMA3_70B", "GB300", "fp8"): ("mbs 2 fsdp", "use_megatron_fsdp=True cpu_offloading_num_layers=20"),
    ("LLAMA3_70B", "GB200", "fp8"): ("mbs 2 fsdp", "use_megatron_fsdp=True cpu_offloading_num_layers=40"),
    ("LLAMA3_70B", "H100", "fp8"): ("tp 4 pp 8 vp 5", ""),
    ("LLAMA3.1_405B", "GB300", "fp8"): ("128 GPUs tp 2 gbs 64 fsdp", "use_megatron_fsdp=True cpu_offloading_num_layers=10"),
    ("LLAMA3.1_405B", "GB200", "fp8"): ("128 GPUs tp 2 gbs 64 fsdp", "use_megatron_fsdp=True cpu_offloading_num_layers=92"),
    ("LLAMA3.1_405B", "B200", "fp8"): ("128 GPUs tp 4 pp 8 cp 2 vp 8 gbs 64", ""),
    ("LLAMA3.1_405B", "H100", "fp8"): ("1024 GPUs tp 8 pp 8 cp 2 vp 8 gbs 512", ""),
    ("DeepSeekV3", "GB300", "*"): ("pp 4 vp 4 ep 64 gbs 2048", "etp=1 moe_flex_dispatcher_backend=hybridep moe_a2a_overlap=False cuda_graph_impl=transformer_engine scope=[attn,moe_router,moe_preprocess] recompute_modules=[moe_act]"),
    ("DeepSeekV3", "GB200", "*"): ("pp 4 vp 4 ep 64 gbs 2048", "etp=1 moe_flex_dispatcher_backend=hybridep moe_a2a_overlap=False cuda_graph_impl=transformer_engine scope=[moe_router,moe_preprocess] recompute_modules=[mla_up_proj]"),
    ("DeepSeekV3", "B200", "*"): ("pp 16 ep 8 gbs 2048", "etp=1 recompute_modules=[mla_up_proj] moe_a2a_overlap=False"),
    ("GPT OSS 120B", "GB300", "bf16"): ("ep 64 mbs 4 gbs 512", "etp=1 cuda_graph_impl=transformer_engine scope=[attn,moe_router,moe_preprocess]"),
    ("GPT OSS 120B", "GB200", "bf16"): ("ep 64 mbs 4 gbs 512", "etp=1 recompute_modules=[layernorm,moe_act]"),
    ("GPT OSS 120B", "B200", "bf16"): ("ep 64 mbs 4 gbs 512", "etp=1 recompute_modules=[layernorm,moe_act]"),
    ("GPT OSS 120B", "H100", "bf16"): ("pp 4 ep 8 mbs 1 gbs 512", "etp=1 recompute_modules=[layernorm,moe_act]"),
    ("Qwen3_30B_a3B", "GB300", "*"): ("8 GPUs ep 8 mbs 8 gbs 512", "etp=1 moe_flex_dispatcher_backend=hybridep cuda_graph_impl=transformer_engine scope=[moe_router,moe_preprocess]"),
    ("Qwen3_30B_a3B", "GB200", "*"): ("8 GPUs ep 8 mbs 4 gbs 512", "etp=1 moe_flex_dispatcher_backend=hybridep cuda_graph_impl=transformer_engine scope=[moe_router,moe_preprocess] (bf16/fp8-cs also attn)"),
    ("Qwen3_30B_a3B", "B200", "*"): ("8 GPUs ep 8 mbs 1 gbs 512", "etp=1 cuda_graph_impl=transformer_engine scope=[moe_router,moe_preprocess]"),
    ("Qwen3_30B_a3B", "H100", "*"): ("16 GPUs pp 2 vp 12 ep 8 gbs 512", "etp=1 moe_a2a_overlap=True"),
    ("Qwen3_235B_a22B", "GB300", "*"): ("64 GPUs ep 64 mbs 2 gbs 1024", "etp=1 moe_flex_dispatcher_backend=hybridep cuda_graph_impl=transformer_engine scope=[moe_router,moe_preprocess]"),
    ("Qwen3_235B_a22B", "GB200", "*"): ("64 GPUs pp 8 ep 8 gbs 1024", "etp=1 moe_flex_dispatcher_backend=hybridep cuda_graph_impl=transformer_engine scope=[attn,moe_router,moe_preprocess]"),
    ("Qwen3_235B_a22B", "B200", "*"): ("64 GPUs pp 8 vp 4 ep 8 gbs 1024", "etp=1 moe_a2a_overlap=True"),
    ("Qwen3_235B_a22B", "H100", "*"): ("256 GPUs tp 2 pp 8 vp 4 ep 32 gbs 2048", "etp=1 moe_a2a_overlap=True"),
}
RECIPE_FILE = {"LLAMA3": "llama3", "LLAMA3.1": "llama31", "DeepSeekV3": "deepseek", "GPT OSS": "gpt_oss", "Qwen3": "qwen3"}

def recipe_for(model, acc, dt):
    key = model.split(" (")[0]
    for k in ((key, acc, dt), (key, acc, "*")):
        if k in RECIPES:
            layout, settings = RECIPES[k]
            # the longest matching prefix: LLAMA3.1 before LLAMA3
            f = RECIPE_FILE[max((p for p in RECIPE_FILE if key.startswith(p)), key=len)]
            return f"{MB}{f}/workload_base_configs.py ({acc} {dt}): layout {layout}; {settings}".rstrip("; ")
    return ""

# Megatron-Bridge r0.2.0's performance scripts turn Megatron-Core's --overlap-param-gather off for
# MXFP8 (precision fp8_mx; their comment: keeping it enabled causes NaN grad norms) in scripts/performance/configs/
# llama3/llama3_llm_pretrain.py (llama3_70b_{gb300,gb200,b200}_config), llama31/llama31_llm_pretrain.py
# (llama31_405b_{gb300,gb200,b200}_config), deepseek/deepseek_llm_pretrain.py
# (deepseek_v3_{gb300,gb200}_config) and qwen3/qwen3_llm_pretrain.py (qwen3_235b_a22b_b200_config):
# the distributed optimizer's parameter all-gathers run before the next step's forward
PARAM_GATHER_OFF_MXFP8 = {("LLAMA3_70B", "GB300"), ("LLAMA3_70B", "GB200"), ("LLAMA3_70B", "B200"),
                          ("LLAMA3.1_405B", "GB300"), ("LLAMA3.1_405B", "GB200"), ("LLAMA3.1_405B", "B200"),
                          ("DeepSeekV3", "GB300"), ("DeepSeekV3", "GB200"), ("Qwen3_235B_a22B", "B200")}

def main(path):
    rows = list(csv.DictReader(open(path, newline="")))
    out = csv.writer(sys.stdout, lineterminator="\n")
    print("# The calibration set of issue 24 in the runs-CSV format of `commscale accuracy` / `fit-step`:")
    print("# generated by data/calibration/make_published_runs.py from ../shared/calibration/published_runs.csv")
    print("# (118 published runs); see data/calibration/README.md for the mapping and the recipes read.")
    cols = ["name", "family", "model", "cluster", "gpus", "tp", "pp", "cp", "ep", "etp", "virtual_stages",
            "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split", "last_stage_layers", "micro_batch",
            "global_batch", "seq", "dtype", "framework", "zero", "recompute", "sequence_parallel",
            "tokens_per_s_per_gpu", "published_tflops_per_gpu", "published_precision", "source", "source_location",
            "recipe", "notes", "not_expressible", "cpu_offloading_num_layers", "grad_reduce_in_fp32",
            "recompute_modules", "optimizer_state_bytes", "moe_token_dispatcher", "fp8_recipe", "overlap_moe_expert_parallel_comm",
            "recompute_method", "recompute_num_layers", "overlap_param_gather", "pipeline_model_parallel_layout"]
    out.writerow(cols)
    for r in rows:
        acc = ACC_SHORT[r["gpu"]]
        dt = dtype(r["precision"])
        one = lambda k: r[k] if r[k] not in ("", "n/a") else "1"
        tp, pp, cp, vp, ep = (int(one(k)) for k in ("tp", "pp", "cp", "vp", "ep"))
        gpus = int(r["num_gpus"])
        moe = r["moe"] == "True"
        llmf = r["framework"].startswith("Composer")
        nemo2407 = r["framework"].startswith("NeMo 24.07")
        notes = []
        if llmf:
            family = "llm-foundry FSDP / A100-40GB / bf16"
            framework, zero = "fsdp", "3"
            recompute = "full" if r["activation_checkpointing"] == "True" else "none"
            recipe = "llm-foundry yamls: fsdp_config sharding_strategy FULL_SHARD, mixed_precision PURE, precision amp_bf16, activation_checkpointing " + r["activation_checkpointing"]
            sp = "false"
        else:
            family = ("NeMo 24.07" if nemo2407 else "Megatron-Bridge 25.11") + " / " + acc + " / " + dt + (" / MoE" if moe else "")
            framework = "megatron-core"
            fsdp = r["fsdp"] not in ("", "0")
            zero = "3" if fsdp else "1"
            recompute = "none"
            sp = "true" if tp > 1 else "false"
            recipe = "" if nemo2407 else recipe_for(r["model"], acc, dt)
            if fsdp:
                notes.append(f"Megatron-FSDP over {r['fsdp']} GPUs (table's FSDP column) as ZeRO-3")
        # GPT-OSS 120B on 64 B200: the table's row states EP 8, the base value of Megatron-Bridge r0.2.0's
        # BASE_GPT_OSS_120B_CONFIG, which GPT_OSS_120B_B200_BF16_BASE_CONFIG overrides with
        # expert_model_parallel_size=64 (scripts/performance/configs/gpt_oss/workload_base_configs.py);
        # its MBS 4 and GBS 512 are that recipe's, and its GA 2 (512 / (4 x 64 DP ranks)) holds for
        # either EP. The recipe's EP 64 is recorded: with EP 8 the expert weights' DP gradients (8-way
        # across nodes, 29 GB per rank in bf16) and with EP 64 the all-to-all crosses the nodes' NICs.
        if r["model"] == "GPT OSS 120B" and acc == "B200" and ep == 8:
            ep = 64
            notes.append("EP 64 from the release's recipe (GPT_OSS_120B_B200_BF16_BASE_CONFIG); the table's EP 8 is the base config's value")
        etp = "1" if moe else ""
        emb = loss = "false"
        if MODELS[r["model"]] == "llama3-405b" and not nemo2407:
            # Megatron-Bridge r0.2.0 src/megatron/bridge/recipes/llama/llama3.py, llama31_405b_pretrain_config:
            # account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split True (126 + 2 = 128 slots)
            emb = loss = "true"
            notes.append("embedding and loss counted as pipeline layers (recipe llama31_405b_pretrain_config)")
        if MODELS[r["model"]] == "qwen3-235b-a22b":
            # Megatron-Bridge r0.2.0 src/megatron/bridge/recipes/qwen/qwen3_moe.py,
            # qwen3_235b_a22b_pretrain_config's recommended kwargs: account_for_embedding_in_pipeline_split
            # and account_for_loss_in_pipeline_split True (not overridden by the performance scripts).
            # Every layout of the table needs them: 94 + 2 = 96 layers split over PP x VP = 48, 24, 16
            # and 32 virtual stages, which 94 alone does not divide (Megatron-Core asserts it).
            emb = loss = "true"
            notes.append("embedding and loss counted as pipeline layers (recipe qwen3_235b_a22b_pretrain_config)")
        # DeepSeek-V3 on B200 runs the recipe's own layout (PP 16, EP 8, GBS 2048), for which
        # Megatron-Bridge r0.2.0 src/megatron/bridge/recipes/deepseek/deepseek_v3.py sets
        # pipeline_model_parallel_layout from its layout_map[(16, 1)]: [embedding + 4 decoder layers],
        # 14 x [4 decoder layers], [1 decoder layer + MTP + loss]: Megatron-Core's
        # --decoder-last-pipeline-num-layers 1, the other 15 stages sharing 60 layers (4 each). The
        # GB200 row in BF16 runs PP 4 x VP 4, for which the recipe sets layout_map[(4, 4)]: the same 16
        # slots interleaved, [1 layer + loss] last (no MTP), Megatron-Core's --pipeline-model-parallel-layout
        # "Et*4|(t*4|)*14tL": ranks 0-2 hold 16 layers, rank 3 holds 13. The GB300 rows (PP 2 x VP 4) and
        # GB200's FP8-MX row (PP 8 x VP 4) run layouts the release's recipe does not hold: the even split
        # stays (README).
        last_stage = layout = ""
        if r["model"].startswith("DeepSeekV3") and acc == "B200" and (pp, vp) == (16, 1):
            last_stage = "1"
            notes.append("pipeline layout of the recipe (deepseek_v3.py layout_map[(16, 1)]): last stage 1 decoder layer + MTP + loss")
        if r["model"].startswith("DeepSeekV3") and acc == "GB200" and dt == "bf16" and (pp, vp) == (4, 4):
            layout = "Et*4|(t*4|)*14tL"
            notes.append("pipeline layout of the recipe (deepseek_v3.py layout_map[(4, 4)]): ranks of 16, 16, 16 and 13 decoder layers")
        if "(" in r["precision"]:
            notes.append("published " + r["precision"] + ": the first value is recorded, the parenthesised one is the alternative recipe")
        not_expr = ""
        # Megatron-Core's --cpu-offloading-num-layers, carried into the plan where the row runs the
        # recipe's own layout (Llama 3 70B on GB200/GB300: Megatron-FSDP, mbs 2, as the table's row).
        # Llama 3.1 405B's GB200/GB300 recipes offload for a 128-GPU TP 2 Megatron-FSDP layout that the
        # table's rows (256 GPUs, TP 2-4 x PP 8-16) do not run: recorded in `recipe` only.
        offload = ""
        if MODELS[r["model"]] == "llama3-70b" and not nemo2407 and r["fsdp"] not in ("", "0"):
            m = re.search(r"cpu_offloading_num_layers=(\d+)", recipe)
            if m:
                offload = m.group(1)
        # Megatron-Bridge's performance scripts set ddp.grad_reduce_in_fp32 = False for every model of
        # the table (set_llama3_common_configs, set_qwen3_common_configs, set_gpt_oss_common_configs
        # and the DeepSeek-V3 common performance configs in scripts/performance/configs/*/
        # *_llm_pretrain.py): bf16 gradient buffers and reductions, the megatron-core profile's default.
        # NeMo 24.07's configs set no grad_sync_dtype (Nemotron-4 340B's below aside): fp32 gradients,
        # written out; llm-foundry's rows take the fsdp profile's (fp32).
        grad_fp32 = "" if llmf else "true" if nemo2407 else "false"
        # NeMo 24.07 ran NeMo-Framework-Launcher's training configs (launcher_scripts/conf/training/
        # <family>/<model>.yaml at the launcher's 24.07 tag, 8325688d): every one uses
        # optim.name distributed_fused_adam (Apex DistributedFusedAdam) with megatron_amp_O2 and bf16
        # weights, for which NeMo (nlp/models/language_modeling/megatron_base_model.py, r2.0.0rc1)
        # keeps 16-bit remainders of the fp32 parameters instead of a master copy
        # (store_param_remainders): 2 + fp32 Adam moments 8 = 10 bytes of optimizer state.
        # nemotron_340b.yaml sets optim.dtype bf16 and grad_sync_dtype bf16: bf16 moments and no
        # main parameters (4 bytes), bf16 gradients; and activations_checkpoint_granularity
        # selective (Megatron-Core's core-attention recompute).
        opt_state = ""
        if nemo2407:
            opt_state = "10"
            if MODELS[r["model"]] == "nemotron4-340b":
                opt_state, grad_fp32, recompute = "4", "false", "selective"
                recipe = ("NeMo-Framework-Launcher 24.07 conf/training/nemotron/nemotron_340b.yaml: optim distributed_fused_adam "
                          "dtype bf16, grad_sync_dtype bf16; activations_checkpoint_granularity selective; hidden_dropout 0")
            else:
                recipe = "NeMo-Framework-Launcher 24.07 training config: optim distributed_fused_adam (fp32 moments, 16-bit parameter remainders)"
        # the recipe's recompute_modules (Megatron-Core --recompute-modules), a memory setting of the
        # model on that system, carried for every row of it (also where the table's layout differs)
        m = re.search(r"recompute_modules=\[([a-z_,]+)\]", recipe)
        modules = m.group(1) if m else ""
        # the recipe's MoE dispatcher: moe_flex_dispatcher_backend=hybridep is Megatron-Core's flex
        # dispatcher with HybridEP; otherwise the recipe keeps Megatron-Bridge's alltoall (written
        # out for MoE rows, empty for dense ones)
        m = re.search(r"moe_flex_dispatcher_backend=([a-z]+)", recipe)
        dispatcher = m.group(1) if m else ("alltoall" if moe else "")
        # per-tensor FP8's scaling (Megatron-Core --fp8-recipe): NeMo 24.07 trained with Transformer
        # Engine's DelayedScaling (its fp8 / fp8_hybrid settings, amax history); Megatron-Bridge
        # 25.11's "FP8-CS" is its performance scripts' fp8_cs, bf16_with_fp8_current_scaling_mixed
        # (src/megatron/bridge/training/mixed_precision.py r0.2.0): fp8_recipe "tensorwise"
        fp8_recipe = ("delayed" if nemo2407 else "tensorwise") if dt == "fp8" else ""
        # the recipe's moe_a2a_overlap=True is Megatron-Core's overlap_moe_expert_parallel_comm
        # (Megatron-Bridge scripts/performance/utils/helpers.py set_moe_a2a_overlap_overrides, r0.2.0)
        a2a = "true" if "moe_a2a_overlap=True" in recipe else ""
        # the recipe's recompute_num_layers=N: Megatron-Bridge r0.2.0 scripts/performance/utils/
        # helpers.py set_recompute_overrides sets recompute_granularity "full", recompute_method
        # "block" and recompute_num_layers N (Megatron-Core --recompute-granularity full
        # --recompute-method block --recompute-num-layers N: the first N layers of each model chunk
        # recomputed). No recipe of the set uses it now (Llama 3 8B on H100 in FP8, above, ran
        # before its recompute_num_layers came in).
        m = re.search(r"recompute_num_layers=(\d+)", recipe)
        rc_method, rc_layers = ("block", m.group(1)) if m else ("", "")
        if m:
            recompute = "full"
        param_gather = "false" if dt == "mxfp8" and (r["model"].split(" (")[0], acc) in PARAM_GATHER_OFF_MXFP8 else ""
        out.writerow([f"{r['model']} {acc} {gpus} GPUs {r['precision']}" + (f" seq {r['seq_len']}" if llmf else "")
                      + (" ckpt" if llmf and recompute == "full" else ""),
                      family, MODELS[r["model"]], CLUSTERS[r["gpu"]], gpus, tp, pp, cp, ep, etp, vp, emb, loss, last_stage,
                      r["micro_batch_size"], r["global_batch_size"], r["seq_len"], dt, framework, zero, recompute, sp,
                      r["tokens_per_sec_per_gpu"], r["tflops_per_gpu"], r["precision"], r["source"], r["source_location"],
                      recipe, "; ".join(notes + ([r["notes"]] if r["notes"] else [])), not_expr, offload, grad_fp32,
                      modules, opt_state, dispatcher, fp8_recipe, a2a, rc_method, rc_layers, param_gather, layout])

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/calibration/published_runs.csv")
