"""commscale: predict, analytically and in microseconds, how distributed training behaves on a GPU
cluster (collective times, step time and bottleneck of a TP/PP/DP plan, plans, calibration).

Each function runs the `commscale` command of the same name in-process and returns exactly what
that command prints with --json, as dicts and lists (the contract is the CLI's, CLI.md):

    import commscale as cs
    r = cs.step("llama3-70b", "dgx-h100", nodes=8, tp=8, pp=2, micro_batch=1, global_batch=512, seq=8192)
    r["step_s"], r["bottleneck"]

Keyword arguments are the command's flags with '_' for '-': ``micro_batch=1`` is
``--micro-batch 1``; True sets a flag (``sequence_parallel=True``), False sets its ``--no-`` form
where the command has one (``dp_overlap=False`` is ``--no-dp-overlap``) and is otherwise the flag's
absence; None leaves an option out; a list or tuple is a comma-separated list (``nodes=[1, 2, 4]``).
Sizes, rates and times may be numbers (bytes, bytes/s, seconds as the flag documents) or strings
with units, as on the command line: ``size="1GiB"``, ``inter="ib-ndr-4x"``.
A model or cluster is a preset name, a file path, or a dict: a config.json object for a model, a
cluster JSON object for a cluster, or what ``cs.model()`` / ``cs.cluster()`` returned.

Invalid input raises ValueError with the message the CLI prints; an internal error RuntimeError.
"""

import json as _json
import os as _os

from . import _core

__version__ = _core.version

__all__ = [
    "accelerator", "accelerators", "accuracy", "capacity", "cluster", "clusters", "collective", "convert", "fit",
    "fit_compute", "fit_step", "link", "links", "model", "models", "plan", "run", "scale", "step", "sweep",
]

# Keys that `commscale model --json` and `commscale cluster --json` add to the model's config.json
# and to the cluster JSON: dropped when such a dict is passed back as a model or cluster.
_MODEL_DERIVED = frozenset({
    "parameters", "active_parameters", "non_embedding_parameters", "embedding_parameters",
    "mtp_parameters", "per_layer", "seq", "model_flops_per_token", "mtp_flops_per_token",
})
_CLUSTER_DERIVED = frozenset({"derived"})

_flags_of = {}


def _flags(command):
    f = _flags_of.get(command)
    if f is None:
        f = _flags_of[command] = frozenset(_core.flags(command))
    return f


def _text(value):
    t = type(value)
    if t is str:
        return value
    if t is int:
        return str(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, float):
        return repr(float(value))  # the shortest round-trip text, also for float subclasses (NumPy)
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, _os.PathLike):
        return _os.fspath(value)
    return str(value)


def _spec(value, derived):
    """A model or cluster argument as the command line takes it: a name or path, or inline JSON."""
    if isinstance(value, dict):
        return _json.dumps({k: v for k, v in value.items() if k not in derived})
    return _text(value)


def _argv(command, positional, options):
    argv = [command]
    argv.extend(_text(p) for p in positional)
    append = argv.append
    for key, value in options.items():
        if value is None:
            continue
        name = "--" + key.replace("_", "-")
        if value is True:
            append(name)
        elif value is False:
            if "no-" + name[2:] in _flags(command):
                append("--no-" + name[2:])
        else:
            append(name)
            t = type(value)
            append(value if t is str else str(value) if t is int else _text(value))
    return argv


def _with(options, model=None, cluster=None):
    if model is not None:
        options["model"] = _spec(model, _MODEL_DERIVED)
    if cluster is not None:
        options["cluster"] = _spec(cluster, _CLUSTER_DERIVED)
    return options


def run(*argv):
    """Runs one command line (``run("step", "--tp", "8")``; --json is added) and returns its JSON."""
    return _core.run([_text(a) for a in argv])


# --- catalog -------------------------------------------------------------------------------------

def links():
    """``commscale links --json``: the link catalog."""
    return _core.run(["links"])


def link(name):
    """``commscale link NAME --json``: one link (per-direction and duplex GB/s, latency, source)."""
    return _core.run(["link", _text(name)])


def accelerators():
    """``commscale accelerators --json``: the accelerator catalog."""
    return _core.run(["accelerators"])


def accelerator(name):
    """``commscale accelerator NAME --json``: one accelerator (peak TFLOPS per dtype, memory, link)."""
    return _core.run(["accelerator", _text(name)])


def clusters():
    """``commscale clusters --json``: the cluster presets."""
    return _core.run(["clusters"])


def cluster(name_or_file, nodes=None, gpus=None, **topology):
    """``commscale cluster NAME|FILE --json``: a preset, cluster JSON file or dict, with --nodes or
    --gpus and any topology flag (gpus_per_node, intra, intra_fabric, inter, nics_per_node,
    accelerator, oversubscription) applied. The result is cluster JSON (``derived`` added) that
    every function taking a cluster accepts back."""
    return _core.run(_argv("cluster", [_spec(name_or_file, _CLUSTER_DERIVED)],
                           dict(topology, nodes=nodes, gpus=gpus)))


def models():
    """``commscale models --json``: the model presets."""
    return _core.run(["models"])


def model(name_or_config, seq=None):
    """``commscale model NAME|FILE --json``: a preset, Hugging Face config.json file or dict, with
    its parameter counts and training FLOPs per token at ``seq``."""
    return _core.run(_argv("model", [_spec(name_or_config, _MODEL_DERIVED)], {"seq": seq}))


def convert(value, unit):
    """``commscale convert VALUE UNIT --json``: ``convert("400Gbps", "GB/s")["result"]`` is 50.0."""
    return _core.run(["convert", _text(value), _text(unit)])


# --- collectives ---------------------------------------------------------------------------------

def collective(cluster=None, op="all_reduce", size=None, **options):
    """``commscale collective --op OP --bytes SIZE --json``: one collective's time, algbw, busbw,
    algorithm and bottleneck. Options: nodes, gpus, algo, efficiency, ranks, ranks_per_node and
    the topology flags."""
    return _core.run(_argv("collective", [], _with(dict(options, op=op, bytes=size), cluster=cluster)))


def sweep(cluster=None, op="all_reduce", **options):
    """``commscale sweep --json``: a size sweep like nccl-tests (min, max, factor, measured=LOG, svg)."""
    return _core.run(_argv("sweep", [], _with(dict(options, op=op), cluster=cluster)))


# --- training ------------------------------------------------------------------------------------

def step(model=None, cluster=None, **options):
    """``commscale step --json``: one training step's time, breakdown, MFU, memory and bottleneck.
    Options: tp, pp, dp, cp, ep, micro_batch, global_batch, seq, zero, recompute, schedule,
    virtual_stages, sequence_parallel, dtype, framework, nodes, gpus,
    account_for_embedding_in_pipeline_split, account_for_loss_in_pipeline_split (Megatron-Core's
    pipeline layout), ... (``commscale step --help``)."""
    return _core.run(_argv("step", [], _with(options, model, cluster)))


def scale(model=None, cluster=None, **options):
    """``commscale scale --json``: the step at each node count (``nodes=[1, 2, 4, 8]``) or GPU count
    (``gpus=[...]``), with the scaling efficiency."""
    return _core.run(_argv("scale", [], _with(options, model, cluster)))


def capacity(model=None, cluster=None, **options):
    """``commscale capacity --json``: GPUs needed (or time) to train. From the model: a model and a
    cluster (names, files or dicts), tokens (``"15T"``) or flops, and days, weeks or gpus; goodput
    (mtbf, checkpoint_time, restart_time), price_per_gpu_hour, rank_by. With a guessed
    utilization: flops or params+tokens (or model+tokens), peak_tflops or accelerator (+dtype),
    utilization, and weeks, days or gpus."""
    return _core.run(_argv("capacity", [], _with(options, model, cluster)))


def plan(model=None, cluster=None, gpus=None, global_batch=None, top=None, **options):
    """``commscale plan --json``: the best TP/PP/DP/CP/EP plans for ``gpus`` GPUs, best first. The
    search runs without the GIL (other Python threads go on); threads=T sets its own threads."""
    return _core.run(_argv("plan", [], _with(dict(options, gpus=gpus, global_batch=global_batch, top=top),
                                             model, cluster)))


# --- calibration ---------------------------------------------------------------------------------

def fit(logs, cluster=None, op=None, **options):
    """``commscale fit LOG... --json``: fit the collective model to nccl-tests/rccl-tests logs (text
    or JSON) or probe output; ``out=FILE`` writes the calibrated cluster JSON, ``svg=FILE`` a plot."""
    paths = [logs] if isinstance(logs, (str, _os.PathLike)) else list(logs)
    return _core.run(_argv("fit", paths, _with(dict(options, op=op), cluster=cluster)))


def accuracy(runs, cluster=None, **options):
    """``commscale accuracy RUNS.csv --json``: predict every run of a runs CSV without fitting, per
    run and per family beside the 40%-MFU rule of thumb; ``svg=FILE`` plots predicted vs measured."""
    return _core.run(_argv("accuracy", [runs], _with(options, cluster=cluster)))


def fit_compute(runs, cluster=None, **options):
    """``commscale fit-compute RUNS.csv --json``: fit the compute model's constants to measured runs
    (on data/calibration/published_runs.csv, the library's defaults), with leave-one-model-out and
    leave-one-accelerator-out errors per family; ``moe=True`` fits the MoE runs too."""
    return _core.run(_argv("fit-compute", [runs], _with(options, cluster=cluster)))


def fit_step(runs, cluster=None, **options):
    """``commscale fit-step RUNS.csv --json``: fit the step model's compute side to measured training
    runs; ``out=FILE`` writes a cluster JSON that step/scale/plan accept as ``cluster``."""
    return _core.run(_argv("fit-step", [runs], _with(options, cluster=cluster)))
