# Types of the commscale Python module (docs/CLI.md "Python"): the functions, their keywords (the
# command's flags with '_' for '-') and the keys of what they return (the command's --json keys).
# Functions not detailed here return the command's --json document as a dict.
from os import PathLike
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence, TypedDict, TypeVar, Union

__version__: str

_T = TypeVar("_T")

class _ArrayLike(Protocol):
    """A NumPy array (or anything NumPy reads as one: a pandas Series)."""
    def __array__(self, *args: Any, **kwargs: Any) -> Any: ...

_Path = Union[str, "PathLike[str]"]
# A size: bytes, or a number with a unit as on the command line ("1GiB", "25MB").
_Size = Union[int, float, str]
# A keyword of a grid: one value for every row, or one value per row (None: the option left out).
_Grid = Union[_T, None, Sequence[Optional[_T]], _ArrayLike]
# A result column: a NumPy array where NumPy is installed (and arrays is not False), else a list.
_Column = Any

class Model(Dict[str, Any]):
    """cs.model()'s result: the `model --json` document as a dict, holding the model parsed once."""
    def __init__(self, document: Mapping[str, Any]) -> None: ...

class Cluster(Dict[str, Any]):
    """cs.cluster()'s result: the `cluster --json` document as a dict, holding the cluster parsed once."""
    def __init__(self, document: Mapping[str, Any]) -> None: ...

# A model: a preset name, a Hugging Face config.json file or dict, or cs.model()'s result.
_ModelArg = Union[str, "PathLike[str]", Mapping[str, Any], Model, None]
# A cluster: a preset name, a cluster JSON file or dict, or cs.cluster()'s result.
_ClusterArg = Union[str, "PathLike[str]", Mapping[str, Any], Cluster, None]

class MemoryBreakdown(TypedDict):
    weights: float
    gradients: float
    optimizer: float
    activations: float

class LayerTimes(TypedDict):
    gemm_fwd: float
    attention_fwd: float
    elementwise_fwd: float
    gemm_bwd: float
    attention_bwd: float
    elementwise_bwd: float
    scan_fwd: float
    scan_bwd: float

class Overlaps(TypedDict):
    dp: bool
    tp: bool
    pp: bool
    zero: bool
    cp: bool

class PlanResult(TypedDict, total=False):
    """`plan` of step --json: the plan as resolved (defaults and the framework's profile applied)."""
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    etp: int
    micro_batch: int
    global_batch: int
    seq: int
    zero: int
    recompute: str
    schedule: str
    virtual_stages: int
    sequence_parallel: bool
    dtype: str
    framework: str
    gradient_bytes: int
    optimizer_state_bytes: int
    bucket_bytes: float
    bucket_per_dp_bytes: float
    overlap: Overlaps
    attention: str
    reduce_every_micro_batch: bool
    expert_load: float
    capacity_factor: float
    pad_to_capacity: bool
    stage_layers: List[int]
    account_for_embedding_in_pipeline_split: bool  # only when set
    account_for_loss_in_pipeline_split: bool  # only when set
    cpu_offloading_num_layers: int  # only when > 0
    recompute_modules: str  # only when any (Megatron-Core's names, comma-separated)
    fp8_recipe: str  # delayed, tensorwise or blockwise, only with dtype fp8
    fp8_param_gather: bool  # only with dtype fp8 or mxfp8
    gradient_accumulation_fusion: bool  # only with framework megatron-core or megatron-lm (in effect)
    overlap_moe_expert_parallel_comm: bool  # only when set
    recompute_method: str  # uniform or block, only when full recompute does not checkpoint every layer
    recompute_num_layers: int  # only when > 0
    first_last_layers_bf16: bool  # only when set
    num_layers_at_start_in_bf16: int  # only with first_last_layers_bf16
    num_layers_at_end_in_bf16: int  # only with first_last_layers_bf16
    moe_token_dispatcher: str  # alltoall, deepep or hybridep

class StepResult(TypedDict):
    """`step --json` (docs/CLI.md "Training step"): times in s, memory in GiB, rates in TFLOP/s and Gbps."""
    step_s: float
    compute_s: float
    bubble_s: float
    tp_comm_s: float
    tp_comm_exposed_s: float
    pp_comm_s: float
    pp_comm_exposed_s: float
    dp_comm_s: float
    dp_comm_exposed_s: float
    cp_comm_s: float
    cp_comm_exposed_s: float
    ep_comm_s: float
    ep_comm_exposed_s: float
    exposed_comm_s: float
    offload_s: float
    offload_exposed_s: float
    bottleneck: str  # compute tp_comm pp_comm dp_comm bubble memory
    bottleneck_detail: str  # the above, cp_comm, ep_comm or offload
    mfu: float
    hfu: float
    tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    tokens_per_s: float
    memory_per_gpu_GiB: float
    memory_capacity_GiB: float
    memory_breakdown_GiB: MemoryBreakdown
    fits_in_memory: bool
    bubble_fraction: float
    micro_batches: int
    compute_efficiency: float
    dp_window_s: float
    dp_inter_node_bytes_per_node: float
    optimizer_s: float
    overlap_slowdown_s: float
    stage_microbatch_s: float
    layer_s: LayerTimes
    required_inter_node_Gbps: Optional[float]  # None: unbounded
    required_inter_node_step_Gbps: Optional[float]
    megatron_model_flops_per_token: float
    megatron_tflops_per_gpu: float
    model: str
    cluster: str
    nodes: int
    gpus: int
    accelerator: str
    plan: PlanResult
    verdict: str

class CollectiveLimiting(TypedDict):
    """`limiting` of `collective --json`: the bottleneck as a structure."""
    kind: str  # none latency intra_link nic spine server_nic switch_reduction
    link: Optional[str]
    sharing: int

class CollectiveResult(TypedDict):
    """`collective --json` (docs/CLI.md "Collectives")."""
    op: str
    algorithm: str
    ranks: int
    nodes: int
    bytes: int
    time_us: float
    algbw_GBps: float
    busbw_GBps: float
    latency_us: float
    transfer_us: float
    bottleneck: str
    limiting: CollectiveLimiting

# cs.steps' columns: the keywords given (where no key below has the name) and these, one value per
# row: the numbers of step --json under dotted keys, its names and verdict words, and `error`
# (None, or the CLI's message for an invalid row).
StepColumns = TypedDict("StepColumns", {
    "step_s": _Column, "compute_s": _Column, "bubble_s": _Column, "tp_comm_s": _Column,
    "tp_comm_exposed_s": _Column, "pp_comm_s": _Column, "pp_comm_exposed_s": _Column, "dp_comm_s": _Column,
    "dp_comm_exposed_s": _Column, "cp_comm_s": _Column, "cp_comm_exposed_s": _Column, "ep_comm_s": _Column,
    "ep_comm_exposed_s": _Column, "exposed_comm_s": _Column, "offload_s": _Column,
    "offload_exposed_s": _Column, "mfu": _Column, "hfu": _Column,
    "tflops_per_gpu": _Column, "hardware_tflops_per_gpu": _Column, "tokens_per_s": _Column,
    "memory_per_gpu_GiB": _Column, "memory_capacity_GiB": _Column, "memory_breakdown_GiB.weights": _Column,
    "memory_breakdown_GiB.gradients": _Column, "memory_breakdown_GiB.optimizer": _Column,
    "memory_breakdown_GiB.activations": _Column, "fits_in_memory": _Column, "bubble_fraction": _Column,
    "micro_batches": _Column, "compute_efficiency": _Column, "dp_window_s": _Column,
    "dp_inter_node_bytes_per_node": _Column, "optimizer_s": _Column, "overlap_slowdown_s": _Column,
    "stage_microbatch_s": _Column, "layer_s.gemm_fwd": _Column, "layer_s.attention_fwd": _Column,
    "layer_s.elementwise_fwd": _Column, "layer_s.gemm_bwd": _Column, "layer_s.attention_bwd": _Column,
    "layer_s.elementwise_bwd": _Column, "layer_s.scan_fwd": _Column, "layer_s.scan_bwd": _Column,
    "required_inter_node_Gbps": _Column,
    "required_inter_node_step_Gbps": _Column, "megatron_model_flops_per_token": _Column,
    "megatron_tflops_per_gpu": _Column, "nodes": _Column, "gpus": _Column, "plan.tp": _Column, "plan.pp": _Column,
    "plan.dp": _Column, "plan.cp": _Column, "plan.ep": _Column, "plan.etp": _Column, "plan.micro_batch": _Column,
    "plan.global_batch": _Column, "plan.seq": _Column, "plan.zero": _Column, "plan.virtual_stages": _Column,
    "plan.sequence_parallel": _Column, "plan.gradient_bytes": _Column, "plan.optimizer_state_bytes": _Column, "plan.bucket_bytes": _Column,
    "plan.bucket_per_dp_bytes": _Column, "plan.overlap.dp": _Column, "plan.overlap.tp": _Column,
    "plan.overlap.pp": _Column, "plan.overlap.zero": _Column, "plan.overlap.cp": _Column,
    "plan.reduce_every_micro_batch": _Column, "plan.expert_load": _Column, "plan.capacity_factor": _Column,
    "plan.pad_to_capacity": _Column, "model": _Column, "cluster": _Column, "accelerator": _Column,
    "bottleneck": _Column, "bottleneck_detail": _Column, "plan.recompute": _Column, "plan.schedule": _Column,
    "plan.dtype": _Column, "plan.framework": _Column, "plan.attention": _Column,
    "plan.moe_token_dispatcher": _Column, "error": _Column,
}, total=False)

# cs.collectives' columns: the keywords given, `size` (the sizes as given), the numbers and texts of
# collective --json, and `error`.
CollectiveColumns = TypedDict("CollectiveColumns", {
    "ranks": _Column, "nodes": _Column, "bytes": _Column, "time_us": _Column, "algbw_GBps": _Column,
    "busbw_GBps": _Column, "latency_us": _Column, "transfer_us": _Column, "op": _Column, "algorithm": _Column,
    "bottleneck": _Column, "size": _Column, "error": _Column,
}, total=False)

def run(*argv: Any) -> Any: ...
def links() -> List[Dict[str, Any]]: ...
def link(name: str) -> Dict[str, Any]: ...
def accelerators() -> List[Dict[str, Any]]: ...
def accelerator(name: str) -> Dict[str, Any]: ...
def clusters() -> List[Dict[str, Any]]: ...
def cluster(name_or_file: _ClusterArg, nodes: Optional[int] = ..., gpus: Optional[int] = ..., *,
            gpus_per_node: Optional[int] = ..., intra: Optional[str] = ..., intra_fabric: Optional[str] = ...,
            inter: Optional[str] = ..., nics_per_node: Optional[int] = ..., accelerator: Optional[str] = ...,
            oversubscription: Optional[float] = ..., scale_up_domain: Optional[int] = ...) -> Cluster: ...
def models() -> List[Dict[str, Any]]: ...
def model(name_or_config: _ModelArg, seq: Optional[int] = ...) -> Model: ...
def convert(value: Union[str, float], unit: str) -> Dict[str, Any]: ...

def collective(cluster: _ClusterArg = ..., op: str = ..., size: Optional[_Size] = ..., *,
               nodes: Optional[int] = ..., gpus: Optional[int] = ..., algo: Optional[str] = ...,
               efficiency: Optional[str] = ..., ranks: Optional[int] = ..., ranks_per_node: Optional[int] = ...,
               gpus_per_node: Optional[int] = ..., intra: Optional[str] = ..., intra_fabric: Optional[str] = ...,
               inter: Optional[str] = ..., nics_per_node: Optional[int] = ..., accelerator: Optional[str] = ...,
               oversubscription: Optional[float] = ..., scale_up_domain: Optional[int] = ...) -> CollectiveResult: ...

def collectives(cluster: Union[_ClusterArg, Sequence[_ClusterArg]] = ..., op: _Grid[str] = ...,
                sizes: _Grid[_Size] = ..., *, threads: Optional[int] = ..., arrays: Optional[bool] = ...,
                nodes: _Grid[int] = ..., gpus: _Grid[int] = ..., algo: _Grid[str] = ..., efficiency: _Grid[str] = ...,
                ranks: _Grid[int] = ..., ranks_per_node: _Grid[int] = ..., gpus_per_node: _Grid[int] = ...,
                intra: _Grid[str] = ..., intra_fabric: _Grid[str] = ..., inter: _Grid[str] = ...,
                nics_per_node: _Grid[int] = ..., accelerator: _Grid[str] = ..., oversubscription: _Grid[float] = ...,
                scale_up_domain: _Grid[int] = ...) -> CollectiveColumns: ...

def sweep(cluster: _ClusterArg = ..., op: str = ..., **options: Any) -> Dict[str, Any]: ...

def pipeline_layout_text(layout: Union[str, Sequence[Sequence[str]]]) -> str: ...

def step(model: _ModelArg = ..., cluster: _ClusterArg = ..., *,
         nodes: Optional[int] = ..., gpus: Optional[int] = ..., tp: Optional[int] = ..., pp: Optional[int] = ...,
         dp: Optional[int] = ..., cp: Optional[int] = ..., ep: Optional[int] = ..., etp: Optional[int] = ...,
         micro_batch: Optional[int] = ..., global_batch: Optional[int] = ..., seq: Optional[int] = ...,
         zero: Optional[int] = ..., recompute: Optional[str] = ..., schedule: Optional[str] = ...,
         virtual_stages: Optional[int] = ..., sequence_parallel: Optional[bool] = ..., no_sequence_parallel: Optional[bool] = ...,
         compute_efficiency: Optional[float] = ..., dtype: Optional[str] = ..., efficiency: Optional[str] = ...,
         framework: Optional[str] = ..., bucket: Optional[_Size] = ..., gradient_bytes: Optional[int] = ...,
         optimizer_state_bytes: Optional[int] = ...,
         expert_load: Optional[float] = ..., capacity_factor: Optional[float] = ...,
         pad_to_capacity: Optional[bool] = ..., dp_overlap: Optional[bool] = ..., no_dp_overlap: Optional[bool] = ...,
         tp_overlap: Optional[bool] = ..., no_tp_overlap: Optional[bool] = ..., pp_overlap: Optional[bool] = ...,
         no_pp_overlap: Optional[bool] = ..., zero_overlap: Optional[bool] = ..., no_zero_overlap: Optional[bool] = ...,
         cp_overlap: Optional[bool] = ..., no_cp_overlap: Optional[bool] = ..., attention: Optional[str] = ...,
         first_stage_layers: Optional[int] = ..., last_stage_layers: Optional[int] = ...,
         account_for_embedding_in_pipeline_split: Optional[bool] = ...,
         account_for_loss_in_pipeline_split: Optional[bool] = ...,
         pipeline_model_parallel_layout: Optional[Union[str, Sequence[Sequence[str]]]] = ...,
         cpu_offloading_num_layers: Optional[int] = ...,
         recompute_modules: Optional[str] = ..., fp8_recipe: Optional[str] = ...,
         fp8_param_gather: Optional[bool] = ..., no_fp8_param_gather: Optional[bool] = ...,
         gradient_accumulation_fusion: Optional[bool] = ..., no_gradient_accumulation_fusion: Optional[bool] = ...,
         overlap_moe_expert_parallel_comm: Optional[bool] = ..., recompute_method: Optional[str] = ...,
         recompute_num_layers: Optional[int] = ..., moe_token_dispatcher: Optional[str] = ...,
         first_last_layers_bf16: Optional[bool] = ..., num_layers_at_start_in_bf16: Optional[int] = ...,
         num_layers_at_end_in_bf16: Optional[int] = ...,
         no_scatter_gather: Optional[bool] = ..., svg: Optional[_Path] = ...,
         gpus_per_node: Optional[int] = ..., intra: Optional[str] = ..., intra_fabric: Optional[str] = ...,
         inter: Optional[str] = ..., nics_per_node: Optional[int] = ..., accelerator: Optional[str] = ...,
         oversubscription: Optional[float] = ..., scale_up_domain: Optional[int] = ...) -> StepResult: ...

def steps(model: Union[_ModelArg, Sequence[_ModelArg]] = ..., cluster: Union[_ClusterArg, Sequence[_ClusterArg]] = ..., *,
          threads: Optional[int] = ..., arrays: Optional[bool] = ...,
          nodes: _Grid[int] = ..., gpus: _Grid[int] = ..., tp: _Grid[int] = ..., pp: _Grid[int] = ...,
          dp: _Grid[int] = ..., cp: _Grid[int] = ..., ep: _Grid[int] = ..., etp: _Grid[int] = ...,
          micro_batch: _Grid[int] = ..., global_batch: _Grid[int] = ..., seq: _Grid[int] = ...,
          zero: _Grid[int] = ..., recompute: _Grid[str] = ..., schedule: _Grid[str] = ...,
          virtual_stages: _Grid[int] = ..., sequence_parallel: _Grid[bool] = ..., no_sequence_parallel: _Grid[bool] = ...,
          compute_efficiency: _Grid[float] = ..., dtype: _Grid[str] = ..., efficiency: _Grid[str] = ...,
          framework: _Grid[str] = ..., bucket: _Grid[_Size] = ..., gradient_bytes: _Grid[int] = ...,
          optimizer_state_bytes: _Grid[int] = ...,
          expert_load: _Grid[float] = ..., capacity_factor: _Grid[float] = ...,
          pad_to_capacity: _Grid[bool] = ..., dp_overlap: _Grid[bool] = ..., no_dp_overlap: _Grid[bool] = ...,
          tp_overlap: _Grid[bool] = ..., no_tp_overlap: _Grid[bool] = ..., pp_overlap: _Grid[bool] = ...,
          no_pp_overlap: _Grid[bool] = ..., zero_overlap: _Grid[bool] = ..., no_zero_overlap: _Grid[bool] = ...,
          cp_overlap: _Grid[bool] = ..., no_cp_overlap: _Grid[bool] = ..., attention: _Grid[str] = ...,
          first_stage_layers: _Grid[int] = ..., last_stage_layers: _Grid[int] = ...,
          account_for_embedding_in_pipeline_split: _Grid[bool] = ...,
          account_for_loss_in_pipeline_split: _Grid[bool] = ..., pipeline_model_parallel_layout: _Grid[str] = ...,
          cpu_offloading_num_layers: _Grid[int] = ...,
          recompute_modules: _Grid[str] = ..., fp8_recipe: _Grid[str] = ...,
          fp8_param_gather: _Grid[bool] = ..., no_fp8_param_gather: _Grid[bool] = ...,
          gradient_accumulation_fusion: _Grid[bool] = ..., no_gradient_accumulation_fusion: _Grid[bool] = ...,
          overlap_moe_expert_parallel_comm: _Grid[bool] = ..., recompute_method: _Grid[str] = ...,
          recompute_num_layers: _Grid[int] = ..., moe_token_dispatcher: _Grid[str] = ...,
          first_last_layers_bf16: _Grid[bool] = ..., num_layers_at_start_in_bf16: _Grid[int] = ...,
          num_layers_at_end_in_bf16: _Grid[int] = ...,
          no_scatter_gather: _Grid[bool] = ...,
          gpus_per_node: _Grid[int] = ..., intra: _Grid[str] = ..., intra_fabric: _Grid[str] = ...,
          inter: _Grid[str] = ..., nics_per_node: _Grid[int] = ..., accelerator: _Grid[str] = ...,
          oversubscription: _Grid[float] = ..., scale_up_domain: _Grid[int] = ...) -> StepColumns: ...

def scale(model: _ModelArg = ..., cluster: _ClusterArg = ..., **options: Any) -> Dict[str, Any]: ...
def capacity(model: _ModelArg = ..., cluster: _ClusterArg = ..., **options: Any) -> Dict[str, Any]: ...
def plan(model: _ModelArg = ..., cluster: _ClusterArg = ..., gpus: Optional[int] = ...,
         global_batch: Optional[int] = ..., top: Optional[int] = ..., **options: Any) -> Dict[str, Any]: ...
def fit(logs: Union[_Path, Sequence[_Path]], cluster: _ClusterArg = ..., op: Optional[str] = ...,
        **options: Any) -> Dict[str, Any]: ...
def accuracy(runs: _Path, cluster: _ClusterArg = ..., **options: Any) -> Dict[str, Any]: ...
def fit_compute(runs: _Path, cluster: _ClusterArg = ..., **options: Any) -> Dict[str, Any]: ...
def fit_step(runs: _Path, cluster: _ClusterArg = ..., **options: Any) -> Dict[str, Any]: ...
