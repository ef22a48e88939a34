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
cluster JSON object for a cluster, or what ``cs.model()`` / ``cs.cluster()`` returned. Those two
return a ``Model`` / ``Cluster``: the dict the command prints, holding the value parsed once, so
that passing it back costs no parsing (unless the dict was changed since).

Grids: ``cs.steps`` and ``cs.collectives`` take a sequence (list, tuple, NumPy array) for any
keyword and evaluate one row per element, in C++, on every core, without the GIL; they return
columns (NumPy arrays when NumPy is installed, else lists): ``pandas.DataFrame(cs.steps(...))``.

Invalid input raises ValueError with the message the CLI prints; an internal error RuntimeError.
"""

import copy as _copy
import json as _json
import os as _os

from . import _core

__version__ = _core.version

__all__ = [
    "Cluster", "Model", "accelerator", "accelerators", "accuracy", "capacity", "cluster", "clusters", "collective",
    "collectives", "convert", "fit", "fit_compute", "fit_step", "link", "links", "model", "models",
    "pipeline_layout_text", "plan", "run", "scale", "step", "steps", "sweep",
]

# Keys that `commscale model --json` and `commscale cluster --json` add to the model's config.json
# and to the cluster JSON: dropped when such a dict is passed back as a model or cluster.
_MODEL_DERIVED = frozenset({
    "parameters", "active_parameters", "non_embedding_parameters", "embedding_parameters",
    "mtp_parameters", "per_layer", "seq", "model_flops_per_token", "mtp_flops_per_token",
})
_CLUSTER_DERIVED = frozenset({"derived"})

# Keywords that only the command line handles (a plot file, its own output switches).
_CLI_ONLY = frozenset({"svg", "json", "help"})

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


def _cell(value):
    """A keyword value the native rows do not read as a number or string: NumPy's bool as a bool,
    anything else as the text a command line would get."""
    if type(value).__name__ == "bool_":
        return bool(value)
    return _text(value)


def _spec(value, derived):
    """A model or cluster argument as the command line takes it: a name or path, or inline JSON."""
    if isinstance(value, dict):
        return _json.dumps({k: v for k, v in value.items() if k not in derived})
    return _text(value)


class _Parsed(dict):
    __slots__ = ("_native", "_snapshot")
    _derived = frozenset()

    def __init__(self, document):
        dict.__init__(self, document)
        self._snapshot = _copy.deepcopy(dict(document))
        try:
            self._native = self._parse(_spec(self, self._derived))
        except ValueError:
            self._native = None  # what the command printed does not read back: passed as JSON, it fails there

    @staticmethod
    def _parse(text):
        raise NotImplementedError

    def _handle(self):
        """The parsed value, while the dict holds what it was parsed from (else None)."""
        native = self._native
        if native is not None and dict.__eq__(self, self._snapshot):
            return native
        return None

    def __reduce__(self):
        return (type(self), (dict(self),))


class Model(_Parsed):
    """What ``cs.model()`` returns: ``commscale model --json``'s document as a dict (index it, compare
    it with the CLI's JSON, print it, change it) that also holds the model parsed once. Passed back
    as ``model=``, it is not parsed again, unless it was changed (then its keys are read as a dict's
    are: the config.json keys, the derived ones left out)."""
    __slots__ = ()
    _derived = _MODEL_DERIVED
    _parse = staticmethod(_core.parse_model)


class Cluster(_Parsed):
    """What ``cs.cluster()`` returns (also for a calibrated cluster JSON file written by ``fit
    --out`` or ``fit-step --out``): ``commscale cluster --json``'s document as a dict that also holds
    the cluster parsed once. Passed back as ``cluster=``, it is not parsed again, unless it was
    changed (then it is read as a cluster JSON dict, ``derived`` left out)."""
    __slots__ = ()
    _derived = _CLUSTER_DERIVED
    _parse = staticmethod(_core.parse_cluster)


def _row_value(value, cls):
    """A model or cluster argument for the native rows: None, a name or path, a parsed value, or
    inline JSON."""
    if value is None or type(value) is str:
        return value
    if type(value) is cls:
        handle = value._handle()
        if handle is not None:
            return handle
    return _spec(value, cls._derived)


def _cli_value(value, cls):
    """A model or cluster argument for a command line: (text, handle or None)."""
    if type(value) is cls:
        handle = value._handle()
        if handle is not None:
            return handle.text, handle
    return _spec(value, cls._derived), None


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


def _cli(command, positional, options, model=None, cluster=None):
    """Runs `command` as a command line: model and cluster handles go with their text."""
    model_handle = cluster_handle = None
    if model is not None:
        options["model"], model_handle = _cli_value(model, Model)
    if cluster is not None:
        options["cluster"], cluster_handle = _cli_value(cluster, Cluster)
    return _core.run(_argv(command, positional, options), model_handle, cluster_handle)


def run(*argv):
    """Runs one command line (``run("step", "--tp", "8")``; --json is added) and returns its JSON."""
    return _core.run([_text(a) for a in argv])


# --- grids ---------------------------------------------------------------------------------------

_result_columns = {}


def _columns_of(command):
    c = _result_columns.get(command)
    if c is None:
        c = _result_columns[command] = tuple(_core.columns(command))
    return c


_numpy_module = []


def _numpy_or_none():
    """NumPy, or None where it is not installed (looked up once)."""
    if not _numpy_module:
        try:
            import numpy
        except ImportError:
            numpy = None
        _numpy_module.append(numpy)
    return _numpy_module[0]


def _numpy(arrays):
    """NumPy where results are arrays (`arrays` None: when installed), else None."""
    numpy = _numpy_or_none()
    if arrays is None or arrays is True:
        if numpy is None and arrays:
            raise ValueError("commscale: arrays: expected False or None (NumPy is not installed), got True")
        return numpy
    if arrays is False:
        return None
    raise ValueError(f"commscale: arrays: expected True, False or None (NumPy arrays when installed), got {arrays!r}")


def _sequence(value, numpy, keyword):
    """A keyword's values as the native rows take them: a list (one value per row), a memoryview
    of a NumPy array's int64, float64, bool or str values, or a scalar."""
    t = type(value)
    if t is list:
        return value
    if t is tuple or t is range:
        return list(value)
    if value is None or isinstance(value, (str, bytes, dict, _os.PathLike)):
        return value
    if numpy is not None and hasattr(value, "__array__"):
        a = numpy.asarray(value)
        if a.ndim == 0:
            return value
        if a.ndim != 1:
            raise ValueError(f"commscale: {keyword}: expected a scalar or a sequence of one value per row, "
                             f"got a {a.ndim}-dimensional array of shape {a.shape}")
        kind = a.dtype.kind
        if kind == "b":
            return memoryview(numpy.ascontiguousarray(a, dtype=numpy.bool_))
        if kind == "i" or (kind == "u" and a.dtype.itemsize < 8):
            return memoryview(numpy.ascontiguousarray(a, dtype=numpy.int64))
        if a.dtype == numpy.float64 or kind == "U":
            return memoryview(numpy.ascontiguousarray(a))
        if kind == "f":
            return [_text(v) for v in a]  # float32 and float16 keep their own shortest text, as one call writes them
        return a.tolist()
    return value


def _threads(threads):
    if threads is None:
        return 0
    if type(threads) is not int or not 1 <= threads <= 1024:
        raise ValueError(f"commscale: threads: expected an integer in [1, 1024] (None: one per core), got {threads!r}")
    return threads


def _check_grid_keywords(function, keywords):
    for k in _CLI_ONLY.intersection(keywords):
        what = "svg=FILE writes one step's plot: cs.step(..., svg=FILE)" if k == "svg" else "not a keyword of a grid"
        raise ValueError(f"commscale: {k}: expected {what}, got it given to cs.{function}")


def _input_column(given, values, rows, numpy):
    """An input keyword as a result column: its values, one per row."""
    if type(values) is memoryview:  # a NumPy array
        return given if numpy is not None else _numpy_or_none().asarray(given).tolist()
    if type(values) is not list:
        if numpy is None:
            return [values] * rows
        if type(values) in (bool, int, float, str):
            return numpy.full(rows, values)
        column = numpy.empty(rows, dtype=object)
        column.fill(values)
        return column
    if numpy is None:
        return list(values)
    if isinstance(given, numpy.ndarray):
        return given
    a = numpy.asarray(values)
    if a.dtype.kind not in "biuf" and not (a.dtype.kind == "U" and all(type(v) is str for v in values)):
        a = numpy.empty(len(values), dtype=object)
        a[:] = values
    return a


def _table(raw, command, inputs, numpy):
    rows, numbers, labels, failures = raw
    names = {key for key, _ in _columns_of(command)}
    out = {}
    for key, (given, values) in inputs.items():
        if key not in names:
            out[key] = _input_column(given, values, rows, numpy)
    failed = sorted(row for row, _ in failures)
    if numpy is not None:
        dtypes = {"real": numpy.float64, "integer": numpy.int64, "boolean": numpy.bool_}
        for key, kind, buffer in numbers:
            column = numpy.frombuffer(buffer, dtype=dtypes[kind])
            if failed and kind == "integer":
                column = column.astype(numpy.float64)
                column[failed] = numpy.nan
            elif failed and kind == "boolean":
                column = column.astype(object)
                column[failed] = None
            out[key] = column
        for key, texts, buffer in labels:
            if len(texts) == 1 and not failed:  # one text in every row (the model's name, say)
                column = numpy.empty(rows, dtype=object)
                column.fill(texts[0])  # (numpy.full is several times slower for objects)
                out[key] = column
                continue
            lookup = numpy.empty(len(texts) + 1, dtype=object)
            lookup[1:] = texts  # code 0: a failed row (None)
            out[key] = lookup.take(numpy.frombuffer(buffer, dtype=numpy.uint32))
        errors = numpy.empty(rows, dtype=object)  # None in every row
    else:
        formats = {"real": "d", "integer": "q", "boolean": "?"}
        for key, kind, buffer in numbers:
            column = memoryview(buffer).cast(formats[kind]).tolist()
            for row in failed:
                column[row] = None
            out[key] = column
        for key, texts, buffer in labels:
            texts = [None] + texts  # code 0: a failed row
            out[key] = [texts[c] for c in memoryview(buffer).cast("I")]
        errors = [None] * rows
    for row, message in failures:
        errors[row] = message
    out["error"] = errors
    return out


def _grid(command, native, model, cluster, keywords, threads, arrays, shown_as=None):
    """Evaluates a grid: `keywords` (scalars or sequences) as columns for `native`, the result as
    `_table` writes it with the inputs under their keyword (or `shown_as` name)."""
    numpy = _numpy(arrays)
    columns = {k: _sequence(v, _numpy_or_none(), k) for k, v in keywords.items()}
    shown_as = shown_as or {}
    inputs = {shown_as.get(k, k): (keywords[k], values) for k, values in columns.items() if keywords[k] is not None}
    models = _sequence(model, _numpy_or_none(), "model")
    if type(models) is memoryview:
        models = _numpy_or_none().asarray(model).tolist()
    if type(models) is list:
        models = [_row_value(m, Model) for m in models]
    elif command == "step":
        models = _row_value(models, Model)
    clusters = _sequence(cluster, _numpy_or_none(), "cluster")
    if type(clusters) is memoryview:
        clusters = _numpy_or_none().asarray(cluster).tolist()
    clusters = [_row_value(c, Cluster) for c in clusters] if type(clusters) is list else _row_value(clusters, Cluster)
    if command == "step":
        raw = native(models, clusters, columns, _threads(threads), _cell)
    else:
        raw = native(clusters, columns, _threads(threads), _cell)
    return _table(raw, command, inputs, numpy)


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
    """``commscale cluster NAME|FILE --json`` as a ``Cluster``: a preset, a cluster JSON file (a
    calibrated one from ``fit --out`` or ``fit-step --out`` too) or dict, with ``nodes`` or ``gpus``
    (nodes = gpus / GPUs per node) and any topology flag (gpus_per_node, intra, intra_fabric, inter,
    nics_per_node, accelerator, oversubscription, scale_up_domain) applied. The result is the
    cluster JSON with ``derived`` added, as a dict that every function taking a cluster accepts
    back, parsed once: passing it back costs no parsing."""
    options = dict(topology, nodes=nodes, gpus=gpus)
    text, handle = _cli_value(name_or_file, Cluster)
    return Cluster(_core.run(_argv("cluster", [text], options), None, handle))


def models():
    """``commscale models --json``: the model presets."""
    return _core.run(["models"])


def model(name_or_config, seq=None):
    """``commscale model NAME|FILE --json`` as a ``Model``: a preset, Hugging Face config.json file or
    dict, with its parameter counts and training FLOPs per token at ``seq`` (default min(2048, the
    model's context)). The result is the config.json keys with the derived ones added, as a dict
    that every function taking a model accepts back, parsed once: passing it back costs no
    parsing."""
    text, handle = _cli_value(name_or_config, Model)
    return Model(_core.run(_argv("model", [text], {"seq": seq}), handle, None))


def convert(value, unit):
    """``commscale convert VALUE UNIT --json``: ``convert("400Gbps", "GB/s")["result"]`` is 50.0."""
    return _core.run(["convert", _text(value), _text(unit)])


# --- collectives ---------------------------------------------------------------------------------

def collective(cluster=None, op="all_reduce", size=None, **options):
    """``commscale collective --op OP --bytes SIZE --json``: one collective's time, algbw, busbw,
    algorithm and bottleneck: {op, algorithm, ranks, nodes, bytes, time_us, algbw_GBps,
    busbw_GBps, latency_us, transfer_us, bottleneck, limiting}. ``size`` is the full buffer as nccl-tests
    counts it (bytes, or a string with a unit: "1GiB"). Options: nodes or gpus, algo (auto,
    fastest, ring, tree, ...), efficiency (default or ideal), ranks, ranks_per_node and the
    topology flags (gpus_per_node, intra, intra_fabric, inter, nics_per_node, accelerator,
    oversubscription, scale_up_domain)."""
    options = dict(options, op=op, bytes=size)
    if _CLI_ONLY.isdisjoint(options):
        return _core.collective(_row_value(cluster, Cluster), options, _cell)
    return _cli("collective", [], options, cluster=cluster)


def collectives(cluster=None, op="all_reduce", sizes=None, *, threads=None, arrays=None, **columns):
    """Many ``collective`` calls at once, as columns: every keyword of ``cs.collective`` (``cluster``,
    ``op``, the message ``sizes`` and every option) may be a scalar or a sequence (list, tuple,
    NumPy array), sequences all of one length, one row per element (scalars repeat). Rows run in
    C++ without the GIL on ``threads`` threads (default: one per core); each row is what
    ``cs.collective`` returns for its values.

    Returns a dict of columns, NumPy arrays when NumPy is installed (``arrays=False``: lists):
    the keywords given (``size``: the sizes as given), the numbers of ``collective --json``
    (ranks, nodes, bytes, time_us, algbw_GBps, busbw_GBps, latency_us, transfer_us), its texts
    (op, algorithm, bottleneck) and ``error``: None, or the CLI's message for a row that is not
    valid (its numbers NaN, or None in lists). ``pandas.DataFrame(cs.collectives(...))``."""
    _check_grid_keywords("collectives", columns)
    keywords = dict(columns)
    keywords["op"] = op
    if sizes is not None:
        keywords["sizes"] = sizes  # --bytes
    return _grid("collective", _core.collectives, None, cluster, keywords, threads, arrays, {"sizes": "size"})


def sweep(cluster=None, op="all_reduce", **options):
    """``commscale sweep --json``: a size sweep like nccl-tests (min, max, factor, measured=LOG, svg)."""
    return _cli("sweep", [], dict(options, op=op), cluster=cluster)


# --- training ------------------------------------------------------------------------------------

_LAYOUT_CHARS = {"embedding": "E", "decoder": "t", "mtp": "m", "loss": "L"}


def pipeline_layout_text(layout):
    """Megatron-Core's pipeline layout in its list form (``TransformerConfig.pipeline_model_parallel_layout``
    as the Megatron-Bridge recipes write it: one list of layer names per virtual stage, ``"embedding"``,
    ``"decoder"``, ``"mtp"``, ``"loss"``) as the string ``pipeline_model_parallel_layout`` takes:
    ``[["embedding", "decoder"], ["decoder", "loss"]]`` is ``"Et|tL"``. A string is returned as is."""
    if isinstance(layout, str):
        return layout
    stages = []
    for i, stage in enumerate(layout):
        if isinstance(stage, str):
            raise ValueError(f"pipeline_model_parallel_layout[{i}]: expected a list of layer names, got {stage!r}")
        chars = []
        for name in stage:
            key = str(name).strip().lower()
            if key not in _LAYOUT_CHARS:
                raise ValueError(f"pipeline_model_parallel_layout[{i}]: expected embedding, decoder, mtp or loss, "
                                 f"got {name!r}")
            chars.append(_LAYOUT_CHARS[key])
        stages.append("".join(chars))
    return "|".join(stages)


def step(model=None, cluster=None, **options):
    """``commscale step --json``: one training step's time, breakdown, MFU, memory and bottleneck
    (docs/CLI.md "Training step"): step_s, compute_s, bubble_s, tp/pp/dp/cp/ep_comm_s and their
    ``_exposed_s``, exposed_comm_s, offload_s and offload_exposed_s (activation CPU offloading's
    host copies and the waits for them), bottleneck (compute, tp_comm, pp_comm, dp_comm, bubble or
    memory), mfu, hfu, tflops_per_gpu, tokens_per_s, megatron_model_flops_per_token,
    megatron_tflops_per_gpu, memory_per_gpu_GiB, fits_in_memory, required_inter_node_Gbps, the
    plan as resolved, and more. Options: tp, pp, dp (default GPUs / (tp pp cp)), cp, ep, etp,
    micro_batch, global_batch (default dp x micro_batch, x 4 pp with pipelining), seq (default
    min(2048, the model's context)), zero, recompute, schedule, virtual_stages (> 1 without
    schedule: interleaved), sequence_parallel (default: the framework's, on with tp >= 2 for
    megatron-core and fsdp; False turns it off), compute_efficiency, dtype, efficiency, framework, bucket, gradient_bytes,
    expert_load, capacity_factor, pad_to_capacity, moe_token_dispatcher, dp_overlap, tp_overlap, pp_overlap,
    zero_overlap, cp_overlap, attention, first_stage_layers, last_stage_layers,
    account_for_embedding_in_pipeline_split, account_for_loss_in_pipeline_split,
    pipeline_model_parallel_layout (Megatron-Core's string, or its list form: pipeline_layout_text),
    cpu_offloading_num_layers, recompute_modules, fp8_recipe, fp8_param_gather, gradient_accumulation_fusion
    (Megatron's; False copies each micro-batch's gradients into the buffer), overlap_moe_expert_parallel_comm,
    recompute_method, recompute_num_layers, first_last_layers_bf16, num_layers_at_start_in_bf16,
    num_layers_at_end_in_bf16, no_scatter_gather, svg, nodes or gpus, and the topology flags
    (``commscale step --help``). With no model, cluster or topology: the README's demo (GPT-3 175B
    on 16 DGX A100)."""
    layout = options.get("pipeline_model_parallel_layout")
    if layout is not None and not isinstance(layout, str):
        options["pipeline_model_parallel_layout"] = pipeline_layout_text(layout)
    if _CLI_ONLY.isdisjoint(options):
        return _core.step(_row_value(model, Model), _row_value(cluster, Cluster), options, _cell)
    return _cli("step", [], options, model, cluster)


def steps(model=None, cluster=None, *, threads=None, arrays=None, **columns):
    """Many ``step`` calls at once, as columns: every keyword of ``cs.step`` (``model``, ``cluster``
    and every option but svg) may be a scalar or a sequence (list, tuple, NumPy array), sequences
    all of one length, one row per element (scalars repeat). Rows run in C++ without the GIL on
    ``threads`` threads (default: one per core); models and clusters are parsed once; each row is
    what ``cs.step`` returns for its values.

    Returns a dict of columns, NumPy arrays when NumPy is installed (``arrays=False``: lists): the
    keywords given, every number of ``step --json`` (nested keys joined with '.':
    ``memory_breakdown_GiB.weights``, ``layer_s.gemm_fwd``, ``plan.dp``, ``plan.global_batch``,
    ...), its names and verdict words (model, cluster, accelerator, bottleneck,
    bottleneck_detail, plan.recompute, plan.schedule, plan.dtype, plan.framework,
    plan.attention, plan.moe_token_dispatcher), and ``error``: None, or the CLI's message for a row that is not valid (its
    numbers NaN, or None in lists; integer columns then float, boolean columns objects). Where a
    keyword is also a key (nodes, gpus), the column is the key's. ``pandas.DataFrame(cs.steps(...))``."""
    _check_grid_keywords("steps", columns)
    return _grid("step", _core.steps, model, cluster, columns, threads, arrays)


def scale(model=None, cluster=None, **options):
    """``commscale scale --json``: the step at each node count (``nodes=[1, 2, 4, 8]``) or GPU count
    (``gpus=[...]``), with the scaling efficiency."""
    return _cli("scale", [], options, model, cluster)


def capacity(model=None, cluster=None, **options):
    """``commscale capacity --json``: GPUs needed (or time) to train. From the model: a model and a
    cluster (names, files or dicts), tokens (``"15T"``) or flops, and days, weeks or gpus; goodput
    (mtbf, checkpoint_time, restart_time), price_per_gpu_hour, rank_by. With a guessed
    utilization: flops or params+tokens (or model+tokens), peak_tflops or accelerator (+dtype),
    utilization, and weeks, days or gpus."""
    return _cli("capacity", [], options, model, cluster)


def plan(model=None, cluster=None, gpus=None, global_batch=None, top=None, **options):
    """``commscale plan --json``: the best TP/PP/DP/CP/EP plans for ``gpus`` GPUs, best first. The
    search runs without the GIL (other Python threads go on); threads=T sets its own threads."""
    return _cli("plan", [], dict(options, gpus=gpus, global_batch=global_batch, top=top), model, cluster)


# --- calibration ---------------------------------------------------------------------------------

def fit(logs, cluster=None, op=None, **options):
    """``commscale fit LOG... --json``: fit the collective model to nccl-tests/rccl-tests logs (text
    or JSON) or probe output; ``out=FILE`` writes the calibrated cluster JSON (``cs.cluster(FILE)``
    reads it back, parsed once), ``svg=FILE`` a plot."""
    paths = [logs] if isinstance(logs, (str, _os.PathLike)) else list(logs)
    return _cli("fit", paths, dict(options, op=op), cluster=cluster)


def accuracy(runs, cluster=None, **options):
    """``commscale accuracy RUNS.csv --json``: predict every run of a runs CSV without fitting, per
    run and per family beside the 40%-MFU rule of thumb; ``svg=FILE`` plots predicted vs measured."""
    return _cli("accuracy", [runs], options, cluster=cluster)


def fit_compute(runs, cluster=None, **options):
    """``commscale fit-compute RUNS.csv --json``: fit the compute model's constants to measured runs
    (on data/calibration/published_runs.csv, the library's defaults), with leave-one-model-out and
    leave-one-accelerator-out errors per family (the dense constants on the dense runs, the MoE
    launch overhead on the MoE runs)."""
    return _cli("fit-compute", [runs], options, cluster=cluster)


def fit_step(runs, cluster=None, **options):
    """``commscale fit-step RUNS.csv --json``: fit the step model's compute side to measured training
    runs; ``out=FILE`` writes a cluster JSON that step/scale/plan accept as ``cluster``
    (``cs.cluster(FILE)`` reads it back, parsed once)."""
    return _cli("fit-step", [runs], options, cluster=cluster)
