#pragma once
// Small SVG writer helpers for the CLI's plots (step --svg, scale --svg): a standalone document,
// rectangles, lines, polylines and text with XML escaping. Numbers are written with 2 decimals.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace cli::svg {

/// XML-escapes text for element content and attribute values.
[[nodiscard]] inline std::string escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
}

/// A coordinate or length as text (2 decimals).
[[nodiscard]] inline std::string n(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

/// Opening tag of a standalone SVG document of the given size, with a white background.
[[nodiscard]] inline std::string open(double width, double height) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + n(width) + "\" height=\"" + n(height) +
           "\" viewBox=\"0 0 " + n(width) + " " + n(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n" +
           "<rect x=\"0\" y=\"0\" width=\"" + n(width) + "\" height=\"" + n(height) + "\" fill=\"white\"/>\n";
}

/// Closing tag.
[[nodiscard]] inline std::string close() { return "</svg>\n"; }

/// A filled rectangle with an optional tooltip title.
[[nodiscard]] inline std::string rect(double x, double y, double w, double h, std::string_view fill,
                                      std::string_view title = {}) {
    std::string s = "<rect x=\"" + n(x) + "\" y=\"" + n(y) + "\" width=\"" + n(w) + "\" height=\"" + n(h) +
                    "\" fill=\"" + escape(fill) + "\"";
    if (title.empty()) return s + "/>\n";
    return s + "><title>" + escape(title) + "</title></rect>\n";
}

/// A line segment.
[[nodiscard]] inline std::string line(double x1, double y1, double x2, double y2, std::string_view stroke = "#333",
                                      double width = 1.0) {
    return "<line x1=\"" + n(x1) + "\" y1=\"" + n(y1) + "\" x2=\"" + n(x2) + "\" y2=\"" + n(y2) + "\" stroke=\"" +
           escape(stroke) + "\" stroke-width=\"" + n(width) + "\"/>\n";
}

/// A polyline through (x, y) points.
[[nodiscard]] inline std::string polyline(const std::vector<std::pair<double, double>>& pts, std::string_view stroke,
                                          double width = 2.0) {
    std::string s = "<polyline fill=\"none\" stroke=\"" + escape(stroke) + "\" stroke-width=\"" + n(width) + "\" points=\"";
    for (const auto& [x, y] : pts) s += n(x) + "," + n(y) + " ";
    return s + "\"/>\n";
}

/// Text at (x, y); `anchor` is start, middle or end.
[[nodiscard]] inline std::string text(double x, double y, std::string_view content, std::string_view anchor = "start",
                                      double size = 12.0) {
    return "<text x=\"" + n(x) + "\" y=\"" + n(y) + "\" text-anchor=\"" + escape(anchor) + "\" font-size=\"" + n(size) +
           "\">" + escape(content) + "</text>\n";
}

}  // namespace cli::svg
