// commscale-probe: measures NCCL collectives on real GPUs for calibration.
//
// Build (needs the CUDA toolkit and NCCL; MPI optional):
//   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOMMSCALE_BUILD_PROBE=ON
//         (add -DCUDAToolkit_ROOT=/usr/local/cuda or -DNCCL_ROOT=/opt/nccl if they are elsewhere)
//   cmake --build build --target commscale_probe        # -> build/bin/commscale-probe
// With COMMSCALE_BUILD_PROBE=AUTO (the default) the probe is built only when CUDA and NCCL are
// found; with MPI found as well it can span nodes. Under AddressSanitizer (COMMSCALE_SANITIZE)
// the CUDA runtime needs ASAN_OPTIONS=protect_shadow_gap=0; measure with a Release build.
//
// Run:
//   build/bin/commscale-probe --json probe.json > probe.log          # all local GPUs, all ops
//   build/bin/commscale-probe -b 8 -e 8G -f 2 -o all_reduce,all_gather -d bfloat16
//   NCCL_ALGO=Ring NCCL_PROTO=Simple build/bin/commscale-probe -o all_reduce --json ring.json
//   mpirun -np 2 -N 1 build/bin/commscale-probe -g 8 --json two_nodes.json   # MPI build only
//   commscale fit probe.json            # or: commscale fit probe.log (nccl-tests text)
//
// One process drives all of its GPUs from one thread (ncclCommInitAll; with MPI, every process
// creates its ranks with ncclCommInitRank after rank 0 broadcasts the ncclUniqueId, and drives
// -g GPUs starting at local_rank x g). For each collective and size it runs --warmup untimed
// iterations, then times --iters back-to-back iterations with the host clock between a stream
// synchronisation and the next one (as nccl-tests does), and reports the mean per iteration.
// Each iteration is one ncclGroupStart/ncclGroupEnd over the local GPUs. Before that, when NCCL
// >= 2.22 and --no-predict is not given, the same group is passed to ncclGroupSimulateEnd and
// NCCL's own estimate is recorded beside the measurement (NCCL's tuning model works in
// microseconds: src/graph/tuning.cc, latencies in us and bandwidths in GB/s).
// Only out-of-place operations are measured (the text report has no in-place block) and data is
// not validated (#wrong is N/A). Rank 0 prints the nccl-tests text on stdout and writes the JSON.
// A single GPU is the degenerate case: every code path runs (all_reduce busbw is then 0).

#include <cuda_runtime.h>
#include <nccl.h>
#if defined(COMMSCALE_PROBE_WITH_MPI)
#include <mpi.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <commscale/io/file.hpp>

#include "probe_core.hpp"

namespace {

using namespace commscale;
using namespace commscale::probe;

/// A CUDA or NCCL call failed (exit status 1).
struct device_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t e, const char* call, int line) {
    if (e != cudaSuccess)
        throw device_failure(std::string("CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                             ") in " + call + " at probe.cpp:" + std::to_string(line) +
                             (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver
                                  ? "; this machine has no usable NVIDIA GPU or driver"
                                  : ""));
}

void check_nccl(ncclResult_t r, const char* call, int line) {
    if (r != ncclSuccess && r != ncclInProgress)
        throw device_failure(std::string("NCCL error ") + std::to_string(static_cast<int>(r)) + " (" +
                             ncclGetErrorString(r) + ") in " + call + " at probe.cpp:" + std::to_string(line) +
                             "; rerun with NCCL_DEBUG=WARN for details");
}

#define COMMSCALE_CUDA(call) check_cuda((call), #call, __LINE__)
#define COMMSCALE_NCCL(call) check_nccl((call), #call, __LINE__)

#if defined(COMMSCALE_PROBE_WITH_MPI)
void check_mpi(int r, const char* call, int line) {
    if (r != MPI_SUCCESS)
        throw device_failure(std::string("MPI error ") + std::to_string(r) + " in " + call + " at probe.cpp:" +
                             std::to_string(line));
}
#define COMMSCALE_MPI(call) check_mpi((call), #call, __LINE__)
#endif

/// This process's place among the processes (1 of 1 without MPI).
struct process_layout {
    int process = 0;
    int processes = 1;
    int local_rank = 0;   ///< index among the processes on the same host
    int local_processes = 1;
};

/// One local GPU: its device, stream, buffers and communicator. Freed by `gpu_set`.
struct gpu {
    int device = 0;
    int rank = 0;  ///< global NCCL rank
    cudaStream_t stream = nullptr;
    void* send = nullptr;
    void* recv = nullptr;
    ncclComm_t comm = nullptr;
};

/// Owns the local GPUs' resources; frees everything on destruction, reporting (not throwing)
/// failures, so an error path frees as much as the success path.
class gpu_set {
public:
    std::vector<gpu> gpus;

    gpu_set() = default;
    gpu_set(const gpu_set&) = delete;
    gpu_set& operator=(const gpu_set&) = delete;
    ~gpu_set() {
        for (auto& g : gpus) {
            if (cudaSetDevice(g.device) != cudaSuccess) continue;
            if (g.comm != nullptr) warn(ncclCommDestroy(g.comm) == ncclSuccess, "ncclCommDestroy");
            if (g.send != nullptr) warn(cudaFree(g.send) == cudaSuccess, "cudaFree");
            if (g.recv != nullptr) warn(cudaFree(g.recv) == cudaSuccess, "cudaFree");
            if (g.stream != nullptr) warn(cudaStreamDestroy(g.stream) == cudaSuccess, "cudaStreamDestroy");
        }
    }

private:
    static void warn(bool ok, const char* what) {
        if (!ok) std::fprintf(stderr, "commscale-probe: warning: %s failed during cleanup\n", what);
    }
};

[[nodiscard]] ncclDataType_t nccl_type(element_type t) {
    switch (t) {
        case element_type::float32: return ncclFloat32;
        case element_type::float16: return ncclFloat16;
        case element_type::bfloat16:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
            return ncclBfloat16;
#else
            throw input_error("--dtype", "'bfloat16'", "float or half (bfloat16 needs NCCL >= 2.10)");
#endif
    }
    return ncclFloat32;
}

/// "2.28.9" from ncclGetVersion's code (major*10000 + minor*100 + patch since 2.9, *1000 before).
[[nodiscard]] std::string nccl_version_text(int code) {
    const int major = code >= 10000 ? code / 10000 : code / 1000;
    const int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
    const int patch = code % 100;
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

[[nodiscard]] std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
    return buf;
}

/// Enqueues one out-of-place operation of `c` on one GPU (inside a group).
void enqueue(collective c, const gpu& g, const size_point& p, element_type t, int root, int ranks) {
    const ncclDataType_t type = nccl_type(t);
    const std::size_t count = p.count;
    switch (c) {
        case collective::all_reduce:
            COMMSCALE_NCCL(ncclAllReduce(g.send, g.recv, count, type, ncclSum, g.comm, g.stream));
            return;
        case collective::all_gather:
            COMMSCALE_NCCL(ncclAllGather(g.send, g.recv, count, type, g.comm, g.stream));
            return;
        case collective::reduce_scatter:
            COMMSCALE_NCCL(ncclReduceScatter(g.send, g.recv, count, type, ncclSum, g.comm, g.stream));
            return;
        case collective::broadcast:
            COMMSCALE_NCCL(ncclBroadcast(g.send, g.recv, count, type, root, g.comm, g.stream));
            return;
        case collective::reduce:
            COMMSCALE_NCCL(ncclReduce(g.send, g.recv, count, type, ncclSum, root, g.comm, g.stream));
            return;
        case collective::alltoall: {
            // Grouped point-to-point, as nccl-tests' alltoall: block r of the send buffer goes to rank r.
            const std::size_t block = count * element_size(t);
            for (int r = 0; r < ranks; ++r) {
                const std::size_t offset = static_cast<std::size_t>(r) * block;
                COMMSCALE_NCCL(ncclSend(static_cast<char*>(g.send) + offset, count, type, r, g.comm, g.stream));
                COMMSCALE_NCCL(ncclRecv(static_cast<char*>(g.recv) + offset, count, type, r, g.comm, g.stream));
            }
            return;
        }
        case collective::sendrecv: {
            // A ring: every rank sends to the next and receives from the previous (nccl-tests sendrecv).
            const int next = (g.rank + 1) % ranks;
            const int prev = (g.rank - 1 + ranks) % ranks;
            COMMSCALE_NCCL(ncclSend(g.send, count, type, next, g.comm, g.stream));
            COMMSCALE_NCCL(ncclRecv(g.recv, count, type, prev, g.comm, g.stream));
            return;
        }
    }
}

/// One iteration: the operation on every local GPU in one NCCL group.
void launch(collective c, const gpu_set& set, const size_point& p, const options& o, int ranks) {
    COMMSCALE_NCCL(ncclGroupStart());
    for (const auto& g : set.gpus) enqueue(c, g, p, o.dtype, o.root, ranks);
    COMMSCALE_NCCL(ncclGroupEnd());
}

void synchronize(const gpu_set& set) {
    for (const auto& g : set.gpus) {
        COMMSCALE_CUDA(cudaSetDevice(g.device));
        COMMSCALE_CUDA(cudaStreamSynchronize(g.stream));
    }
}

/// NCCL's predicted time (us) for one iteration, or nullopt (NCCL < 2.22, or NCCL declined).
[[nodiscard]] std::optional<double> nccl_prediction(collective c, const gpu_set& set, const size_point& p,
                                                    const options& o, int ranks) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 22, 0)
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    COMMSCALE_NCCL(ncclGroupStart());
    for (const auto& g : set.gpus) enqueue(c, g, p, o.dtype, o.root, ranks);
    const ncclResult_t r = ncclGroupSimulateEnd(&sim);
    if (r != ncclSuccess) {
        std::fprintf(stderr, "commscale-probe: warning: ncclGroupSimulateEnd failed for %s at %llu bytes (%s)\n",
                     std::string(name(c)).c_str(), static_cast<unsigned long long>(p.bytes), ncclGetErrorString(r));
        return std::nullopt;
    }
    const double us = static_cast<double>(sim.estimatedTime);
    if (!(us > 0.0)) return std::nullopt;
    return us;
#else
    (void)c, (void)set, (void)p, (void)o, (void)ranks;
    return std::nullopt;
#endif
}

/// Mean time per iteration in seconds, averaged over processes (nccl-tests averages too).
[[nodiscard]] double time_iterations(collective c, const gpu_set& set, const size_point& p, const options& o,
                                     int ranks, const process_layout& layout) {
    for (int i = 0; i < o.warmup; ++i) launch(c, set, p, o, ranks);
    synchronize(set);
#if defined(COMMSCALE_PROBE_WITH_MPI)
    COMMSCALE_MPI(MPI_Barrier(MPI_COMM_WORLD));
#endif
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.iters; ++i) launch(c, set, p, o, ranks);
    synchronize(set);
    const auto t1 = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(t1 - t0).count() / o.iters;
#if defined(COMMSCALE_PROBE_WITH_MPI)
    double sum = 0;
    COMMSCALE_MPI(MPI_Allreduce(&seconds, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    seconds = sum / layout.processes;
#else
    (void)layout;
#endif
    return seconds;
}

[[nodiscard]] process_layout discover_processes() {
    process_layout l;
#if defined(COMMSCALE_PROBE_WITH_MPI)
    COMMSCALE_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &l.process));
    COMMSCALE_MPI(MPI_Comm_size(MPI_COMM_WORLD, &l.processes));
    MPI_Comm local;
    COMMSCALE_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, l.process, MPI_INFO_NULL, &local));
    COMMSCALE_MPI(MPI_Comm_rank(local, &l.local_rank));
    COMMSCALE_MPI(MPI_Comm_size(local, &l.local_processes));
    COMMSCALE_MPI(MPI_Comm_free(&local));
#endif
    return l;
}

/// Describes this process's GPUs; with MPI, gathers every process's on all processes.
[[nodiscard]] machine_info describe(const gpu_set& set, const process_layout& layout) {
    machine_info m;
    m.processes = layout.processes;
    int runtime = 0;
    COMMSCALE_CUDA(cudaRuntimeGetVersion(&runtime));
    m.cuda_runtime = runtime;
    int nccl = 0;
    COMMSCALE_NCCL(ncclGetVersion(&nccl));
    m.nccl_version = nccl_version_text(nccl);
    const std::string host = host_name();
    const long pid = static_cast<long>(getpid());
    for (const auto& g : set.gpus) {
        cudaDeviceProp prop{};
        COMMSCALE_CUDA(cudaGetDeviceProperties(&prop, g.device));
        char bus[48];
        std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", static_cast<unsigned>(prop.pciDomainID),
                      static_cast<unsigned>(prop.pciBusID), static_cast<unsigned>(prop.pciDeviceID));
        m.devices.push_back({g.rank, pid, host, g.device, bus, prop.name});
    }
#if defined(COMMSCALE_PROBE_WITH_MPI)
    // Fixed-size records: rank, pid, device, host[64], bus[32], name[256].
    struct record {
        long rank, pid, device;
        char host[64], bus[32], name[256];
    };
    std::vector<record> mine(m.devices.size());
    for (std::size_t i = 0; i < m.devices.size(); ++i) {
        const auto& d = m.devices[i];
        record& r = mine[i];
        r = {};
        r.rank = d.rank;
        r.pid = d.pid;
        r.device = d.device;
        std::snprintf(r.host, sizeof r.host, "%s", d.host.c_str());
        std::snprintf(r.bus, sizeof r.bus, "%s", d.bus_id.c_str());
        std::snprintf(r.name, sizeof r.name, "%s", d.name.c_str());
    }
    std::vector<record> all(mine.size() * static_cast<std::size_t>(layout.processes));
    const int bytes = static_cast<int>(mine.size() * sizeof(record));
    COMMSCALE_MPI(MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, MPI_COMM_WORLD));
    m.devices.clear();
    for (const auto& r : all)
        m.devices.push_back({static_cast<int>(r.rank), r.pid, r.host, static_cast<int>(r.device), r.bus, r.name});
    std::sort(m.devices.begin(), m.devices.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
#endif
    return m;
}

/// Picks the local GPUs, creates the communicators, streams and buffers.
void open_gpus(gpu_set& set, const options& o, const process_layout& layout, std::uint64_t send_bytes,
               std::uint64_t recv_bytes) {
    int visible = 0;
    COMMSCALE_CUDA(cudaGetDeviceCount(&visible));
    if (visible < 1) throw device_failure("no CUDA device visible (cudaGetDeviceCount = 0)");
    const int per_process = o.gpus > 0 ? o.gpus : std::max(1, visible / layout.local_processes);
    const int first = layout.local_rank * per_process;
    if (first + per_process > visible)
        throw input_error("--gpus", std::to_string(per_process) + " per process x " +
                                        std::to_string(layout.local_processes) + " processes on this host",
                          "at most the " + std::to_string(visible) + " visible GPUs");
    const int ranks = per_process * layout.processes;
    if (o.root >= ranks)
        throw input_error("--root", std::to_string(o.root), "a rank below " + std::to_string(ranks));

    std::vector<int> devices(static_cast<std::size_t>(per_process));
    for (int i = 0; i < per_process; ++i) devices[static_cast<std::size_t>(i)] = first + i;
    set.gpus.resize(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        set.gpus[i].device = devices[i];
        set.gpus[i].rank = layout.process * per_process + static_cast<int>(i);
    }

    std::vector<ncclComm_t> comms(devices.size(), nullptr);
#if defined(COMMSCALE_PROBE_WITH_MPI)
    ncclUniqueId id{};
    if (layout.process == 0) COMMSCALE_NCCL(ncclGetUniqueId(&id));
    COMMSCALE_MPI(MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD));
    COMMSCALE_NCCL(ncclGroupStart());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        COMMSCALE_CUDA(cudaSetDevice(devices[i]));
        COMMSCALE_NCCL(ncclCommInitRank(&comms[i], ranks, id, set.gpus[i].rank));
    }
    COMMSCALE_NCCL(ncclGroupEnd());
#else
    COMMSCALE_NCCL(ncclCommInitAll(comms.data(), per_process, devices.data()));
#endif
    for (std::size_t i = 0; i < devices.size(); ++i) set.gpus[i].comm = comms[i];

    for (auto& g : set.gpus) {
        COMMSCALE_CUDA(cudaSetDevice(g.device));
        COMMSCALE_CUDA(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
        COMMSCALE_CUDA(cudaMalloc(&g.send, std::max<std::uint64_t>(send_bytes, 1)));
        COMMSCALE_CUDA(cudaMalloc(&g.recv, std::max<std::uint64_t>(recv_bytes, 1)));
        // Zeros: reductions of zeros stay finite whatever the type, so no NaN/inf slow paths.
        COMMSCALE_CUDA(cudaMemset(g.send, 0, send_bytes));
        COMMSCALE_CUDA(cudaMemset(g.recv, 0, recv_bytes));
    }
    synchronize(set);
    for (auto& g : set.gpus) {
        COMMSCALE_CUDA(cudaSetDevice(g.device));
        COMMSCALE_CUDA(cudaDeviceSynchronize());
    }
}

int run(const options& o) {
    const process_layout layout = discover_processes();
    const bool leader = layout.process == 0;

    // Rank count first (it shapes the ladder), then buffers sized for the largest step.
    int visible = 0;
    COMMSCALE_CUDA(cudaGetDeviceCount(&visible));
    if (visible < 1) throw device_failure("no CUDA device visible (cudaGetDeviceCount = 0)");
    const int per_process = o.gpus > 0 ? o.gpus : std::max(1, visible / layout.local_processes);
    const int ranks = per_process * layout.processes;
    std::uint64_t send_bytes = 0, recv_bytes = 0;
    for (const collective c : o.ops)
        for (const auto& p : size_ladder(o, c, ranks)) {
            send_bytes = std::max(send_bytes, p.send_bytes);
            recv_bytes = std::max(recv_bytes, p.recv_bytes);
        }

    gpu_set set;
    open_gpus(set, o, layout, send_bytes, recv_bytes);
    const machine_info m = describe(set, layout);
    const nccl_environment env = read_nccl_environment([](const char* k) { return std::getenv(k); });

    std::vector<collective_result> results;
    for (const collective c : o.ops) {
        const auto ladder = size_ladder(o, c, ranks);
        collective_result res{c, {}};
        if (leader) {
            std::cout << text_preamble(c, m, o) << text_column_header() << std::flush;
            if (ladder.empty())
                std::cout << "# every size from --min to --max is below one element per rank: skipped\n";
        }
        bool predict = o.predict;
        for (const auto& p : ladder) {
            std::optional<double> predicted;
            if (predict) {
                predicted = nccl_prediction(c, set, p, o, ranks);
                if (!predicted && res.rows.empty()) predict = false;  // NCCL does not estimate this op
            }
            const double seconds = time_iterations(c, set, p, o, ranks, layout);
            res.rows.push_back(make_row(c, p, ranks, seconds, predicted));
            if (leader) std::cout << text_row(c, res.rows.back(), o.dtype, o.root) << std::flush;
        }
        if (leader) std::cout << text_footer(res) << std::flush;
        results.push_back(std::move(res));
    }

    if (leader && !o.json_path.empty()) io::write_file_atomic(o.json_path, to_json(m, o, env, results).dump(2) + "\n", "--json");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(COMMSCALE_PROBE_WITH_MPI)
    MPI_Init(&argc, &argv);
    const auto finish = [](int status) {
        if (status != 0) MPI_Abort(MPI_COMM_WORLD, status);
        MPI_Finalize();
        return status;
    };
#else
    const auto finish = [](int status) { return status; };
#endif
    int status = 0;
    try {
        const options o = parse_options(argc, argv);
        if (o.help) {
            std::cout << usage();
            return finish(0);
        }
        status = run(o);
    } catch (const input_error& e) {
        std::fprintf(stderr, "commscale-probe: error: %s\n(see commscale-probe --help)\n", e.what());
        status = 2;
    } catch (const device_failure& e) {
        std::fprintf(stderr, "commscale-probe: error: %s\n", e.what());
        status = 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "commscale-probe: error: %s\n", e.what());
        status = 1;
    }
    return finish(status);
}
