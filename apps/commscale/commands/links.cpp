// `commscale links` and `commscale link NAME`: the interconnect catalog (CLI.md "Catalog").
#include <commscale/hardware/links.hpp>
#include <commscale/io/catalog_json.hpp>
#include <commscale/io/hardware_json.hpp>

#include "../cli.hpp"
#include "../options.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace links_command {

std::string latency_text(const commscale::link& l) {
    return l.latency ? cli::num(commscale::in_us(*l.latency), 3) : std::string("-");
}

std::vector<std::string> row(const commscale::link& l) {
    using namespace commscale;
    return {std::string(l.name),
            std::string(to_string(l.kind)),
            cli::num(in_GBps(l.per_direction), 3),
            cli::num(in_GBps(l.duplex().both_directions), 3),
            cli::num(in_Gbps(l.per_direction), 1),
            latency_text(l),
            std::to_string(l.links) + " x " + std::to_string(l.lanes),
            l.rdma ? "yes" : "no"};
}

const std::vector<std::string> header = {"name", "kind", "GB/s/dir", "duplex GB/s", "Gbps/dir", "latency us",
                                         "links x lanes", "rdma"};

/// What `links`'s options give.
struct links_request {
    std::optional<commscale::link_kind> kind;  ///< only the links of this kind
};

cli::registrar reg_links{cli::bound_command<links_request>(
    "links",
    "list the interconnect catalog (per-direction and duplex bandwidth, latency)",
    "usage: commscale links [--kind scale_up|host_bus|scale_out] [--json]\n"
    "Lists every catalog link. Bandwidth is per direction; duplex is both directions together.\n"
    "JSON: {\"links\": [{name, kind, per_direction_GBps, duplex_GBps, latency_us, lanes, links, source, ...}]}",
    {cli::opt::choice<commscale::link_kind, links_request>("kind", &links_request::kind)},
    [](const links_request& r, const cli::args& a, std::ostream& out) {
        using namespace commscale;
        if (a.flag("json") && !r.kind) {
            cli::print_json(out, io::links_catalog_json());
        } else if (a.flag("json")) {
            nlohmann::json list = nlohmann::json::array();
            for (const commscale::link& l : all_links())
                if (l.kind == *r.kind) list.push_back(link_to_json(l));
            cli::print_json(out, {{"links", std::move(list)}});
        } else {
            std::vector<std::vector<std::string>> rows;
            for (const commscale::link& l : all_links())
                if (!r.kind || l.kind == *r.kind) rows.push_back(row(l));
            cli::print_table(out, header, rows);
        }
        return 0;
    })};

cli::registrar reg_link{cli::command{
    "link",
    "show one catalog link (commscale link nvlink4)",
    "usage: commscale link NAME [--json]\n"
    "NAME: a catalog link (`commscale links` lists them; docs/CLI.md \"Catalog\" their spellings).\n"
    "JSON: {name, kind, per_direction_GBps, duplex_GBps, latency_us (null if unpublished), lanes, links, source, ...}",
    {},
    [](const cli::args& a, std::ostream& out) {
        using namespace commscale;
        const commscale::link l = link_by_name(a.positional[0], "link");
        if (a.flag("json")) {
            cli::print_json(out, link_to_json(l));
        } else {
            out << "name           " << l.name << "\n"
                << "kind           " << to_string(l.kind) << " (" << to_string(l.family)
                << (l.rdma ? ", RDMA" : ", no RDMA") << ")\n"
                << "per direction  " << cli::num(in_GBps(l.per_direction), 3) << " GB/s ("
                << cli::num(in_Gbps(l.per_direction), 1) << " Gbps)\n"
                << "duplex         " << cli::num(in_GBps(l.duplex().both_directions), 3) << " GB/s\n"
                << "layout         " << l.links << " link(s) x " << l.lanes << " lane(s) x "
                << cli::num(in_GBps(l.per_lane), 4) << " GB/s, encoding " << to_string(l.encoding) << "\n"
                << "latency        " << (l.latency ? latency_text(l) + " us" : std::string("unpublished")) << "\n"
                << "source         " << l.source << "\n";
        }
        return 0;
    },
    1, 1}};

}  // namespace links_command
}  // namespace
