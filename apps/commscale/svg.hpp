#pragma once
// Small SVG writer helpers for the CLI's plots (step, scale, sweep, fit, fit-step --svg): a
// standalone document, rectangles, lines, polylines and text with XML escaping (numbers with 2
// decimals), and `chart`: an x-y plot with readable axes (round tick values, every tick labelled,
// margins sized to the labels so nothing is clipped, a log2 byte-size axis for message sizes).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <string>
#include <string_view>
#include <utility>
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
    return fmt::format("{:.2f}", v);
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

/// A "nice" tick step (1, 2 or 5 x 10^k) giving about `target` intervals over a span.
[[nodiscard]] inline double nice_step(double span, int target) {
    if (!(span > 0) || !std::isfinite(span)) return 1.0;
    const double raw = span / std::max(target, 1);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (raw <= m * mag * (1 + 1e-9)) return m * mag;
    return 10.0 * mag;
}

/// A tick value written with as many decimals as its step needs (0.25 -> "0.25", 20 -> "20").
[[nodiscard]] inline std::string tick_text(double v, double step) {
    const int digits = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    return fmt::format("{:.{}f}", std::abs(v) < step * 1e-9 ? 0.0 : v, std::clamp(digits, 0, 6));
}

/// A byte count as a binary-prefixed size: 1KiB, 512MiB, 2GiB (exact for powers of two).
[[nodiscard]] inline std::string bytes_text(double b) {
    static constexpr const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    while (i < 5 && b >= 1024.0) {
        b /= 1024.0;
        ++i;
    }
    return b == std::floor(b) ? fmt::format("{:.0f}{}", b, names[i]) : fmt::format("{:.2g}{}", b, names[i]);
}

/// One axis of a chart: its range, title and scale (linear, or log2 of a byte size).
struct axis {
    double lo = 0, hi = 1;
    std::string title;
    bool log2_bytes = false;  ///< log2 scale with ticks at powers of two labelled as sizes
    bool log2_count = false;  ///< log2 scale with ticks at powers of two labelled as counts (GPUs)
};

/// An x-y chart: linear or log2-byte x axis, linear y axis; series of lines and markers with a
/// legend. `render(y_offset)` draws it as a group at a vertical offset so several charts can share
/// one document (e.g. busbw above, error per size below).
class chart {
public:
    chart(double width, double height, std::string title, axis x, axis y)
        : w_(width), h_(height), title_(std::move(title)), x_(std::move(x)), y_(std::move(y)) {
        if (log2_x()) {
            x_.lo = std::max(x_.lo, 1.0);
            x_.hi = std::max(x_.hi, 2.0 * x_.lo);
        } else if (!(x_.hi > x_.lo)) {
            x_.hi = x_.lo + 1;
        }
        if (!(y_.hi > y_.lo)) y_.hi = y_.lo + 1;
        // Round the y range out to whole ticks.
        ystep_ = nice_step(y_.hi - y_.lo, 6);
        y_.lo = std::floor(y_.lo / ystep_ + 1e-9) * ystep_;
        y_.hi = std::ceil(y_.hi / ystep_ - 1e-9) * ystep_;
        std::size_t widest = 1;
        for (double v = y_.lo; v <= y_.hi + ystep_ * 1e-6; v += ystep_) widest = std::max(widest, tick_text(v, ystep_).size());
        left_ = 34.0 + 7.0 * static_cast<double>(widest) + 10.0;
        if (!log2_x()) xstep_ = nice_step(x_.hi - x_.lo, 8);
    }

    /// Pixel column of data x.
    [[nodiscard]] double px(double x) const {
        const double pw = w_ - left_ - right_;
        if (log2_x())
            return left_ + (std::log2(std::max(x, 1.0)) - std::log2(x_.lo)) / (std::log2(x_.hi) - std::log2(x_.lo)) * pw;
        return left_ + (x - x_.lo) / (x_.hi - x_.lo) * pw;
    }
    /// Pixel row of data y (inside this chart, before the offset).
    [[nodiscard]] double py(double y) const {
        const double ph = h_ - top_ - bottom();
        return top_ + ph - (std::clamp(y, y_.lo, y_.hi) - y_.lo) / (y_.hi - y_.lo) * ph;
    }

    /// A polyline through data points, with a legend entry when `label` is not empty.
    void line(const std::vector<std::pair<double, double>>& pts, std::string color, std::string label, double width = 2.0,
              bool dashed = false) {
        std::string s = "<polyline fill=\"none\" stroke=\"" + escape(color) + "\" stroke-width=\"" + n(width) + "\"" +
                        (dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"";
        for (const auto& [x, y] : pts) s += n(px(x)) + "," + n(py(y)) + " ";
        body_ += s + "\"/>\n";
        if (!label.empty()) legend_.push_back({std::move(color), std::move(label), false});
    }
    /// Square markers at data points, each with a tooltip; a legend entry when `label` is set.
    void points(const std::vector<std::pair<double, double>>& pts, const std::vector<std::string>& tips, std::string color,
                std::string label, double size = 6.0) {
        for (std::size_t i = 0; i < pts.size(); ++i)
            body_ += rect(px(pts[i].first) - size / 2, py(pts[i].second) - size / 2, size, size, color,
                          i < tips.size() ? tips[i] : std::string());
        if (!label.empty()) legend_.push_back({std::move(color), std::move(label), true});
    }
    /// A horizontal reference line at data y (e.g. 0% error), light grey.
    void hline(double y, std::string color = "#888888") { body_ += svg::line(left_, py(y), w_ - right_, py(y), color, 1.0); }

    /// The chart as an SVG group at vertical offset `y_offset`.
    [[nodiscard]] std::string render(double y_offset = 0) const {
        std::string s = "<g transform=\"translate(0 " + n(y_offset) + ")\">\n";
        const double x0 = left_, x1 = w_ - right_, yb = h_ - bottom();
        if (!title_.empty()) s += text(w_ / 2, 22, title_, "middle", 14);
        // Horizontal grid and y labels at every tick.
        for (double v = y_.lo; v <= y_.hi + ystep_ * 1e-6; v += ystep_) {
            s += svg::line(x0, py(v), x1, py(v), "#e4e4e4", 1.0);
            s += text(x0 - 6, py(v) + 4, tick_text(v, ystep_), "end", 11);
        }
        // Vertical ticks, every one labelled; labels turn 45 degrees when they would overlap.
        const auto ticks = x_ticks();
        double spacing = 1e9;
        std::size_t longest = 1;
        for (std::size_t i = 0; i < ticks.size(); ++i) {
            longest = std::max(longest, ticks[i].second.size());
            if (i) spacing = std::min(spacing, px(ticks[i].first) - px(ticks[i - 1].first));
        }
        const bool slant = spacing < 7.0 * static_cast<double>(longest) + 6.0;
        for (const auto& [v, label] : ticks) {
            const double x = px(v);
            s += svg::line(x, top_, x, yb, "#f0f0f0", 1.0) + svg::line(x, yb, x, yb + 5, "#333", 1.0);
            if (slant)
                s += "<text x=\"" + n(x) + "\" y=\"" + n(yb + 16) + "\" text-anchor=\"end\" font-size=\"11\" transform=\"rotate(-45 " +
                     n(x) + " " + n(yb + 16) + ")\">" + escape(label) + "</text>\n";
            else
                s += text(x, yb + 18, label, "middle", 11);
        }
        s += svg::line(x0, yb, x1, yb, "#333", 1.0) + svg::line(x0, top_, x0, yb, "#333", 1.0);
        // Axis titles: x below the labels, y rotated along the left edge.
        s += text((x0 + x1) / 2, h_ - 8, x_.title, "middle", 12);
        const double ym = (top_ + yb) / 2;
        s += "<text x=\"16\" y=\"" + n(ym) + "\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 16 " + n(ym) +
             ")\">" + escape(y_.title) + "</text>\n";
        s += body_;
        // Legend: one row between the title and the plot area, so it never covers data.
        double lx = x0;
        for (const auto& e : legend_) {
            s += e.marker ? rect(lx, top_ - 18, 8, 8, e.color) : svg::line(lx - 2, top_ - 14, lx + 10, top_ - 14, e.color, 2.0);
            s += text(lx + 16, top_ - 10, e.label, "start", 11);
            lx += 16 + 7.0 * static_cast<double>(e.label.size()) + 24;
        }
        return s + "</g>\n";
    }

    [[nodiscard]] double height() const { return h_; }
    [[nodiscard]] double width() const { return w_; }

private:
    struct legend_entry {
        std::string color, label;
        bool marker;
    };
    [[nodiscard]] bool log2_x() const { return x_.log2_bytes || x_.log2_count; }
    [[nodiscard]] double bottom() const { return log2_x() ? 78.0 : 50.0; }
    [[nodiscard]] std::vector<std::pair<double, std::string>> x_ticks() const {
        std::vector<std::pair<double, std::string>> t;
        if (log2_x()) {
            const int a = static_cast<int>(std::ceil(std::log2(x_.lo) - 1e-9));
            const int b = static_cast<int>(std::floor(std::log2(x_.hi) + 1e-9));
            // Every power of two while they fit at >= 12 px apart (labels slanted), else every 2nd/4th.
            const double pw = w_ - left_ - right_;
            int every = 1;
            while (b > a && pw / ((b - a) / every + 0.0) < 12.0) every *= 2;
            for (int e = a; e <= b; e += every)
                t.emplace_back(std::exp2(e), x_.log2_bytes ? bytes_text(std::exp2(e)) : fmt::format("{:.0f}", std::exp2(e)));
        } else {
            for (double v = std::ceil(x_.lo / xstep_ - 1e-9) * xstep_; v <= x_.hi + xstep_ * 1e-6; v += xstep_)
                t.emplace_back(v, tick_text(v, xstep_));
        }
        return t;
    }

    double w_, h_;
    std::string title_;
    axis x_, y_;
    double ystep_ = 1, xstep_ = 1, left_ = 60, right_ = 24, top_ = 56;
    std::string body_;
    std::vector<legend_entry> legend_;
};

/// A standalone document holding charts stacked top to bottom.
[[nodiscard]] inline std::string document(const std::vector<const chart*>& charts, std::string_view title = {}) {
    double w = 0, h = 0;
    for (const chart* c : charts) {
        w = std::max(w, c->width());
        h += c->height();
    }
    std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + open(w, h);
    if (!title.empty()) s += "<title>" + escape(title) + "</title>\n";
    double y = 0;
    for (const chart* c : charts) {
        s += c->render(y);
        y += c->height();
    }
    return s + close();
}

}  // namespace cli::svg
