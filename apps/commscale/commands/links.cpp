// `commscale links` and `commscale link NAME`: the interconnect catalog (CLI.md "Catalog").
#include <commscale/hardware/links.hpp>
#include <commscale/io/catalog_json.hpp>
#include <commscale/io/hardware_json.hpp>

#include "../cli.hpp"

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

cli::registrar reg_links{cli::command{
    "links",
    "list the interconnect catalog (per-direction and duplex bandwidth, latency)",
    "usage: commscale links [--kind scale_up|host_bus|scale_out] [--json]\n"
    "Lists every catalog link. Bandwidth is per direction; duplex is both directions together.\n"
    "JSON: {\"links\": [{name, kind, per_direction_GBps, duplex_GBps, latency_us, lanes, links, source, ...}]}",
    {{"kind", true, "scale_up, host_bus or scale_out"}},
    [](const cli::args& a, std::ostream& out) {
        using namespace commscale;
        std::optional<link_kind> kind;
        if (auto k = a.get("kind")) {
            const std::array<std::string_view, 3> names{to_string(link_kind::scale_up),
                                                        to_string(link_kind::host_bus),
                                                        to_string(link_kind::scale_out)};
            for (std::size_t i = 0; i < names.size(); ++i)
                if (names[i] == *k) kind = static_cast<link_kind>(i);
            if (!kind) throw unknown_name("--kind", *k, names);
        }
        if (a.flag("json") && !kind) {
            cli::print_json(out, io::links_catalog_json());
        } else if (a.flag("json")) {
            nlohmann::json list = nlohmann::json::array();
            for (const commscale::link& l : all_links())
                if (l.kind == *kind) list.push_back(link_to_json(l));
            cli::print_json(out, {{"links", std::move(list)}});
        } else {
            std::vector<std::vector<std::string>> rows;
            for (const commscale::link& l : all_links())
                if (!kind || l.kind == *kind) rows.push_back(row(l));
            cli::print_table(out, header, rows);
        }
        return 0;
    },
    0, 0}};

cli::registrar reg_link{cli::command{
    "link",
    "show one catalog link (commscale link nvlink4)",
    "usage: commscale link NAME [--json]\n"
    "  NAME  a catalog link: nvlink2..nvlink5 (bundles nvlink3-nv12 ...), pcie4-x16 (gen 4-7, x1..x16),\n"
    "        xgmi-mi250x, xgmi-mi300x, gaudi2-scaleup, gaudi2-scaleout, ib-ndr-4x (edr/hdr/ndr/xdr/gdr,\n"
    "        1x/4x/8x/12x), efa-v1, efa-v2, roce-100..roce-800, eth-100..eth-400, slingshot-200,\n"
    "        opa-100, opa-200, tcpx, tcpxo (see `commscale links`)\n"
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
