// Metrics-file parsing and the SVG drawing of learning curves. The SVG uses only basic shapes,
// text and inline attributes (no scripts, no external fonts or styles), so any renderer shows it.
#include "learning_curves.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "anycl/error.hpp"
#include "anycl/util/atomic_file.hpp"
#include "anycl/util/bounded_read.hpp"

namespace anycl::cli {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Adds (epoch, value) to the curve NAME in the panel that the column NAME_loss / NAME_acc belongs to.
void add_point(LearningCurves& c, const std::string& column, double epoch, double value) {
  std::vector<Curve>* panel = nullptr;
  std::string name;
  if (ends_with(column, "_loss")) panel = &c.loss, name = column.substr(0, column.size() - 5);
  if (ends_with(column, "_acc")) panel = &c.accuracy, name = column.substr(0, column.size() - 4);
  if (!panel || name.empty()) return;
  auto it = std::find_if(panel->begin(), panel->end(), [&](const Curve& k) { return k.name == name; });
  if (it == panel->end()) it = panel->insert(panel->end(), Curve{name, {}, {}});
  it->epochs.push_back(epoch);
  it->values.push_back(value);
}

double parse_number(const std::string& text, const std::string& path, size_t line) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v))
    throw DataError(
        fmt::format("{}:{}: '{}' is not a number — is this a metrics file from `anycl train "
                    "--metrics`?",
                    path, line, text));
  return v;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> parts;
  std::istringstream in(line);
  std::string part;
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

// One JSON Lines row of flat "key": number pairs, as MetricsFile writes them.
std::map<std::string, std::string> parse_json_row(const std::string& line, const std::string& path,
                                                  size_t n) {
  std::map<std::string, std::string> row;
  size_t i = line.find('{');
  if (i == std::string::npos || line.find('}') == std::string::npos)
    throw DataError(fmt::format(
        "{}:{}: not a JSON object — write metrics with `anycl train --metrics run.jsonl`", path, n));
  while ((i = line.find('"', i)) != std::string::npos) {
    const size_t close = line.find('"', i + 1), colon = line.find(':', close);
    if (close == std::string::npos || colon == std::string::npos) break;
    const size_t value_end = line.find_first_of(",}", colon);
    std::string value = line.substr(colon + 1, value_end - colon - 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r") + 1);
    row[line.substr(i + 1, close - i - 1)] = value;
    if (value_end == std::string::npos) break;
    i = value_end;
  }
  return row;
}

// "Nice" tick positions (1, 2 or 5 × 10^k apart) covering [lo, hi].
std::vector<double> ticks(double lo, double hi, int target) {
  const double raw = (hi - lo) / target, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5   ? mag
                      : raw / mag < 3.5 ? 2 * mag
                      : raw / mag < 7.5 ? 5 * mag
                                        : 10 * mag;
  std::vector<double> out;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return out;
}

std::string label(double v) {
  std::string s = fmt::format("{:.4g}", v);
  return s;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"};
constexpr const char* kDashes[] = {"", "7,4", "2,3", "9,3,2,3"};

// One panel at (x0, y0) of size w×h (the plot area inside the axes).
std::string panel(const std::vector<Curve>& curves, const std::string& title, const std::string& y_name,
                  double x0, double y0, double w, double h, bool unit_range) {
  double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
  for (const Curve& c : curves)
    for (size_t i = 0; i < c.values.size(); ++i) {
      xmin = std::min(xmin, c.epochs[i]), xmax = std::max(xmax, c.epochs[i]);
      ymin = std::min(ymin, c.values[i]), ymax = std::max(ymax, c.values[i]);
    }
  std::string svg = fmt::format("<g font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n");
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>\n",
      x0 + w / 2, y0 - 14, escape(title));
  if (curves.empty()) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">no {} columns in the "
        "metrics</text>\n</g>\n",
        x0 + w / 2, y0 + h / 2, escape(y_name));
    return svg;
  }
  if (xmax - xmin < 1) xmin -= 0.5, xmax += 0.5;
  const double pad = std::max((ymax - ymin) * 0.08, std::max(std::abs(ymax), 1e-3) * 0.02);
  ymin -= pad, ymax += pad;
  if (unit_range) ymin = std::max(ymin, 0.0), ymax = std::min(ymax, 1.0);
  if (!(ymax > ymin)) ymax = ymin + 1e-3;
  if (!unit_range && ymin < 0 && ymin > -pad * 1.01) ymin = 0;
  auto sx = [&](double x) { return x0 + (x - xmin) / (xmax - xmin) * w; };
  auto sy = [&](double y) { return y0 + h - (y - ymin) / (ymax - ymin) * h; };

  // Grid, ticks and tick labels. Epochs are whole numbers: no fractional x ticks.
  for (double t : ticks(ymin, ymax, 6)) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#e3e3e3\"/>\n", x0, sy(t),
        x0 + w);
    svg +=
        fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#333\"/>\n",
                    x0 - 5, sy(t), x0);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", x0 - 8, sy(t) + 4,
                       label(t));
  }
  for (double t : ticks(xmin, xmax, 8)) {
    if (std::abs(t - std::round(t)) > 1e-9) continue;
    svg +=
        fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n",
                    sx(t), y0 + h, y0 + h + 5);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", sx(t),
                       y0 + h + 19, label(t));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
                     x0, y0, w, h);
  svg +=
      fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">epoch</text>\n", x0 + w / 2, y0 + h + 38);
  svg += fmt::format("<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     x0 - 52, y0 + h / 2, escape(y_name));

  // The series, then the legend (top right, inside the plot area).
  for (size_t k = 0; k < curves.size(); ++k) {
    const Curve& c = curves[k];
    const char* color = kColors[k % 4];
    std::string points;
    for (size_t i = 0; i < c.values.size(); ++i)
      points += fmt::format("{:.1f},{:.1f} ", sx(c.epochs[i]), sy(c.values[i]));
    svg +=
        fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.2\"{}/>\n", points,
                    color, *kDashes[k % 4] ? fmt::format(" stroke-dasharray=\"{}\"", kDashes[k % 4]) : "");
    for (size_t i = 0; i < c.values.size(); ++i)
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", sx(c.epochs[i]),
                         sy(c.values[i]), color);
  }
  // The legend goes in whichever corner of the plot area covers the fewest curve points.
  const double lw = 110, lh = 8 + 20.0 * double(curves.size());
  double lx = 0, ly = 0;
  size_t best = SIZE_MAX;
  for (const auto& [cx, cy] :
       {std::pair{x0 + w - lw - 8, y0 + 8}, std::pair{x0 + w - lw - 8, y0 + h - lh - 8},
        std::pair{x0 + 8, y0 + 8}, std::pair{x0 + 8, y0 + h - lh - 8}}) {
    size_t covered = 0;
    for (const Curve& c : curves)
      for (size_t i = 0; i < c.values.size(); ++i) {
        const double px = sx(c.epochs[i]), py = sy(c.values[i]);
        covered += px > cx - 12 && px < cx + lw + 12 && py > cy - 12 && py < cy + lh + 12;
      }
    if (covered < best) best = covered, lx = cx, ly = cy;
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\" fill-opacity=\"0.9\" "
      "stroke=\"#999\"/>\n",
      lx, ly, lw, lh);
  for (size_t k = 0; k < curves.size(); ++k) {
    const double y = ly + 16 + 20.0 * double(k);
    svg +=
        fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.2\"{}/>\n",
                    lx + 8, y - 4, lx + 38, y - 4, kColors[k % 4],
                    *kDashes[k % 4] ? fmt::format(" stroke-dasharray=\"{}\"", kDashes[k % 4]) : "");
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", lx + 46, y, escape(curves[k].name));
  }
  return svg + "</g>\n";
}

}  // namespace

LearningCurves read_learning_curves(const std::string& path) {
  std::string text;
  try {
    text = read_text_file_bounded(path, kMaxTextFileBytes, "metrics file");
  } catch (const DataError& e) {
    throw DataError(fmt::format("{} — write one with `anycl train --metrics run.csv`", e.what()));
  }
  return parse_learning_curves(text, path);
}

LearningCurves parse_learning_curves(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  LearningCurves c;
  const bool jsonl = ends_with(path, ".jsonl");
  std::string line;
  std::vector<std::string> header;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line == "\r") continue;
    if (jsonl) {
      const auto row = parse_json_row(line, path, n);
      const auto epoch = row.find("epoch");
      if (epoch == row.end())
        throw DataError(
            fmt::format("{}:{}: no \"epoch\" field — is this a metrics file from `anycl train "
                        "--metrics`?",
                        path, n));
      const double e = parse_number(epoch->second, path, n);
      for (const auto& [key, value] : row)
        if (ends_with(key, "_loss") || ends_with(key, "_acc"))
          add_point(c, key, e, parse_number(value, path, n));
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto cells = split(line, ',');
    if (header.empty()) {
      header = cells;
      if (header.empty() || header[0] != "epoch")
        throw DataError(
            fmt::format("{}:1: the first column must be 'epoch' — is this a metrics file from "
                        "`anycl train --metrics run.csv`?",
                        path));
      continue;
    }
    if (cells.size() != header.size())
      throw DataError(
          fmt::format("{}:{}: {} values for {} columns — the file is truncated or not a metrics file", path,
                      n, cells.size(), header.size()));
    const double e = parse_number(cells[0], path, n);
    for (size_t i = 1; i < cells.size(); ++i)
      if (ends_with(header[i], "_loss") || ends_with(header[i], "_acc"))
        add_point(c, header[i], e, parse_number(cells[i], path, n));
  }
  if (c.loss.empty() && c.accuracy.empty())
    throw DataError(
        fmt::format("metrics file '{}' holds no epochs with loss or accuracy columns — train with "
                    "`anycl train --metrics {}` first",
                    path, path));
  return c;
}

LearningCurves learning_curves(const std::vector<EpochStats>& history) {
  LearningCurves c;
  for (const EpochStats& s : history) {
    add_point(c, "train_loss", double(s.epoch), s.train_loss);
    add_point(c, "train_acc", double(s.epoch), s.train_accuracy);
    if (s.has_eval) {
      add_point(c, s.eval_name + "_loss", double(s.epoch), s.eval.loss);
      add_point(c, s.eval_name + "_acc", double(s.epoch), s.eval.accuracy);
    }
  }
  return c;
}

std::string render_learning_curves_svg(const LearningCurves& curves, const std::string& title) {
  if (curves.loss.empty() && curves.accuracy.empty())
    throw ValidationError("no learning curves to draw — the run has no finished epoch yet");
  constexpr int kWidth = 960, kHeight = 420;
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n"
      "<title>{2}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"24\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"16\" "
      "text-anchor=\"middle\">{2}</text>\n",
      kWidth, kHeight, escape(title), kWidth / 2);
  svg += panel(curves.loss, "Loss", "loss", 80, 70, 370, 280, false);
  svg += panel(curves.accuracy, "Accuracy", "accuracy", 560, 70, 370, 280, true);
  return svg + "</svg>\n";
}

void write_learning_curves_svg(const std::string& path, const LearningCurves& curves,
                               const std::string& title) {
  write_file_atomically(path, render_learning_curves_svg(curves, title));
}

}  // namespace anycl::cli
