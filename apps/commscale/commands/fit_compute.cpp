// `commscale fit-compute RUNS.csv [--cluster NAME|FILE | topology] [--no-cross-validation] [--json]`: fits the compute model's constants (predict/compute.hpp compute_constants) to the runs
// of a runs CSV and cross-validates the fit (include/commscale/calibrate/compute_fit.hpp). On
// data/calibration/published_runs.csv it re-derives the library's defaults.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <commscale/calibrate/compute_fit.hpp>
#include <commscale/io/training_runs.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace fit_compute_command {

using namespace commscale;

/// What `fit-compute`'s own options and the topology flags give.
struct fit_compute_request {
    cli::topology_request topology;
    bool cross_validate = true;  ///< the leave-one-model-out and leave-one-accelerator-out fits
};

std::vector<cli::bound_option<fit_compute_request>> options() {
    using r = fit_compute_request;
    return cli::topology_bound<r>(&r::topology) +
           std::vector<cli::bound_option<r>>{
               cli::opt::flag<r>("no-cross-validation", &r::cross_validate,
                            "skip the leave-one-model-out and leave-one-accelerator-out fits", false),
           };
}

std::string pct(double v) { return cli::num(100 * v, 1) + "%"; }

// A constant as written in predict/compute.hpp: 4 significant digits.
std::string constant(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

nlohmann::json family_json(const compute_fit_family& f) {
    return {{"family", f.name},
            {"runs", f.runs},
            {"kernel_constants", f.prior},
            {"in_sample", f.in_sample},
            {"leave_one_model_out", f.leave_model_out},
            {"leave_one_accelerator_out", f.leave_accelerator_out},
            {"rule_of_thumb", f.rule}};
}

cli::registrar reg{cli::bound_command<fit_compute_request>(
    "fit-compute",
    "fit the compute model's constants to a runs CSV, with leave-one-model/accelerator-out errors",
    "usage: commscale fit-compute RUNS.csv [--cluster NAME|FILE | topology] [--no-cross-validation] [--json]\n"
    "Fits the compute model's constants (predict/compute.hpp) to the runs, with cross-validated errors (docs/calibration.md).\n"
    "--json: {constants: {NAME: value}, parameters: [{name, prior, value, uncertainty}],\n"
    "         accelerator_efficiencies: [{name, prior, value, uncertainty}], families, all, dense, moe, runs, skipped}\n"
    "An accelerator without a published GEMM measurement (compute_efficiency_basis assumed or fitted) has its\n"
    "compute_efficiency fitted to its runs, around the default 0.8 (rows ACCELERATOR.compute_efficiency).",
    options(),
    [](const fit_compute_request& req, const cli::args& a, std::ostream& out) {
        const auto runs = io::load_training_runs(a.positional.at(0), "RUNS.csv");
        const cluster base = cli::resolve_cluster(req.topology);
        compute_fit_options opt;
        opt.cross_validate = req.cross_validate;
        const compute_fit_result f = compute_fit(runs, base, opt);
        if (a.flag("json")) {
            nlohmann::json constants = nlohmann::json::object(), params = nlohmann::json::array();
            for (const auto& p : f.parameters) {
                constants[p.name] = p.value;
                params.push_back({{"name", p.name}, {"prior", p.prior}, {"value", p.value}, {"uncertainty", p.uncertainty}});
            }
            nlohmann::json accs = nlohmann::json::array();
            for (const auto& p : f.accelerator_efficiencies)
                accs.push_back({{"name", p.name}, {"prior", p.prior}, {"value", p.value}, {"uncertainty", p.uncertainty}});
            nlohmann::json fams = nlohmann::json::array(), rs = nlohmann::json::array();
            for (const auto& fam : f.families) fams.push_back(family_json(fam));
            auto opt_num = [&](double v) { return opt.cross_validate && v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
            for (const auto& r : f.runs)
                rs.push_back({{"label", r.label},
                              {"family", r.family},
                              {"model", r.model},
                              {"accelerator", r.accelerator},
                              {"moe", r.moe},
                              {"measured_tokens_per_s_per_gpu", r.measured},
                              {"kernel_constants", r.prior},
                              {"in_sample", r.in_sample},
                              {"leave_one_model_out", opt_num(r.leave_model_out)},
                              {"leave_one_accelerator_out", opt_num(r.leave_accelerator_out)},
                              {"rule_of_thumb", r.rule}});
            cli::print_json(out, {{"constants", constants},
                                  {"parameters", params},
                                  {"accelerator_efficiencies", accs},
                                  {"noise", f.noise},
                                  {"moe_noise", f.moe_noise},
                                  {"families", fams},
                                  {"all", family_json(f.all)},
                                  {"dense", family_json(f.dense)},
                                  {"moe", family_json(f.moe)},
                                  {"runs", rs},
                                  {"skipped", f.skipped}});
            return 0;
        }
        out << "fitted to " << f.runs.size() << " run(s): " << f.dense.runs << " dense (noise " << pct(f.noise) << " in log), "
            << f.moe.runs << " MoE (noise " << pct(f.moe_noise) << ")\n\n";
        std::vector<std::vector<std::string>> prow;
        for (const auto& p : f.parameters)
            prow.push_back({p.name, constant(p.prior), constant(p.value), constant(p.uncertainty)});
        for (const auto& p : f.accelerator_efficiencies)
            prow.push_back({p.name + ".compute_efficiency", constant(p.prior), constant(p.value), constant(p.uncertainty)});
        cli::print_table(out, {"constant", "kernel figure", "fitted", "+-"}, prow);
        out << "\nmedian |error| in tokens/s per GPU (error = predicted / measured - 1)\n\n";
        std::vector<std::vector<std::string>> rows;
        auto row = [&](const compute_fit_family& fam) {
            const bool cv = opt.cross_validate && fam.leave_model_out > 0;
            rows.push_back({fam.name, std::to_string(fam.runs), pct(fam.prior), pct(fam.in_sample),
                            cv ? pct(fam.leave_model_out) : std::string("-"),
                            cv ? pct(fam.leave_accelerator_out) : std::string("-"), pct(fam.rule)});
        };
        for (const auto& fam : f.families) row(fam);
        row(f.dense);
        row(f.moe);
        row(f.all);
        cli::print_table(out, {"family", "runs", "kernel figures", "fitted", "leave model out", "leave accel. out", "40% MFU"},
                         rows);
        out << "\n(leave-out columns: each run predicted by a fit without its model's or its accelerator's runs)\n";
        for (const auto& s : f.skipped) out << "skipped: " << s << "\n";
        return 0;
    },
    1, 1)};

}  // namespace fit_compute_command
}  // namespace
