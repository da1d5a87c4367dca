#include <attnlab/core/text.hpp>
#include <attnlab/io/plot.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

extern char** environ;

namespace attnlab::io {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Each colour of kSeriesColours with its own point shape, so that series stay apart in grey too; past the seventh
// series the lines are dashed and the shapes shift by one, so that no two of the first 49 share colour and shape.
constexpr int kPointTypes[] = {7, 5, 9, 13, 11, 6, 4};
constexpr std::size_t kStyles = std::size(kSeriesColours);
static_assert(std::size(kPointTypes) == kStyles);
std::size_t dash_type(std::size_t series) { return 1 + (series / kStyles) % 3; }
constexpr const char* kReferenceColour = "#666666";
constexpr std::size_t kDenseCurve = 60;   // a curve of more points is drawn as a line alone: markers would merge
constexpr std::size_t kUnrotatedTic = 6;  // named ticks longer than this are slanted

// gnuplot single-quoted string: no escapes, '' stands for a quote.
std::string gp_quoted(const std::string& s) {
  std::string q;
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return "'" + q + "'";
}

// A number for the script or the data file; gnuplot skips a NaN point.
std::string gnuplot_number(double v) {
  if (!std::isfinite(v)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

// Characters as a reader counts them (UTF-8 continuation bytes are not).
std::size_t characters(const std::string& s) {
  return std::size_t(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// An axis in the units it is drawn in: log10 of the value on a log axis.
struct Axis {
  bool log = false;
  bool drawable(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double to(double v) const { return log ? (v > 0 ? std::log10(v) : -kInf) : v; }
  double from(double u) const { return log ? std::pow(10.0, u) : u; }
};

struct Span {
  double lo = kInf, hi = -kInf;
  void add(double u) {
    if (std::isnan(u)) return;
    lo = std::min(lo, u), hi = std::max(hi, u);
  }
  bool empty() const { return !(lo <= hi); }
  double width() const { return hi - lo; }
};

// The range drawn on one axis (in drawn units): the points', extended to their bars by at most half the points'
// width (a bar reaching further runs off the frame, so that one wide interval cannot squash the rest), padded by
// `pad` of its width on each side; a single value gets a width of its own.
Span fitted_range(const Span& points, const Span& bars, const Axis& axis, double pad) {
  // Widths within rounding of a single value (a residual at 1 +- 1e-16) count as none: gnuplot refuses them.
  const auto wide = [](const Span& s) { return s.width() > 1e-9 * std::max({1.0, std::abs(s.lo), std::abs(s.hi)}); };
  const double own = wide(points) ? points.width() : axis.log ? 1.0 : points.lo != 0 ? std::abs(points.lo) * 0.2 : 1.0;
  Span r = points;
  if (!bars.empty()) {
    r.lo = std::min(r.lo, std::max(bars.lo, points.lo - own / 2));
    r.hi = std::max(r.hi, std::min(bars.hi, points.hi + own / 2));
  }
  if (!wide(r)) {
    const double middle = (r.lo + r.hi) / 2;
    r.lo = middle - own / 2, r.hi = middle + own / 2;
  }
  const double width = r.width();
  r.lo -= pad * width, r.hi += pad * width;
  return r;
}

// A bar's end in data units: one off a log axis (non-positive) or far past the range is moved just past the frame,
// where gnuplot clips it; an unknown one (not finite: no interval) ends at the point.
double bar_end(double v, double point, const Span& range, const Axis& axis) {
  if (!std::isfinite(v)) return point;
  return axis.from(std::clamp(axis.to(v), range.lo - range.width(), range.hi + range.width()));
}

// The x a fitted line spans: where it was fitted, else the series' drawable points.
std::pair<double, double> fit_span(const Series& s) {
  if (s.fit->x_lo > 0 && s.fit->x_hi > s.fit->x_lo) return {s.fit->x_lo, s.fit->x_hi};
  double lo = kInf, hi = -kInf;
  for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
    if (s.x[i] > 0 && std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
      lo = std::min(lo, s.x[i]), hi = std::max(hi, s.x[i]);
  return {lo, hi};
}

struct Ranges {
  Span x{}, y{};
  bool any = false;  // some point can be drawn
};

Ranges ranges(const Figure& f) {
  const Axis ax{f.logx}, ay{f.logy};
  Span px, py, bx, by;
  for (const auto& s : f.series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!ax.drawable(s.x[i]) || !ay.drawable(s.y[i])) continue;
      px.add(ax.to(s.x[i])), py.add(ay.to(s.y[i]));
      if (s.lo.size() != s.y.size() || s.hi.size() != s.y.size()) continue;
      const Axis& bar_axis = s.x_bars ? ax : ay;
      Span& bars = s.x_bars ? bx : by;
      for (double end : {s.lo[i], s.hi[i]})
        if (std::isfinite(end)) bars.add(bar_axis.to(end));
    }
  // A fitted line is drawn over its span: its ends (a power law's extremes) belong in the range too.
  for (const auto& s : f.series) {
    if (!s.fit || px.empty()) continue;
    const auto [lo, hi] = fit_span(s);
    for (double x : {lo, hi}) {
      const double y = s.fit->law.prefactor * std::pow(x, s.fit->law.exponent);
      if (x > 0 && ax.drawable(x) && ay.drawable(y)) py.add(ay.to(y));
    }
  }
  Ranges r{.any = !px.empty()};
  if (!f.xtics.empty()) {
    for (const auto& [at, name] : f.xtics) r.x.add(at);
    r.x.lo -= 0.5, r.x.hi += 0.5;
  } else if (r.any) {
    r.x = fitted_range(px, bx, ax, 0.03);
  } else {
    r.x = {ax.to(ax.log ? 0.1 : 0.0), ax.to(ax.log ? 10.0 : 1.0)};
  }
  if (!f.ytics.empty()) {
    for (const auto& [at, name] : f.ytics) r.y.add(at);
    r.y.lo -= 0.75, r.y.hi += 0.75;
  } else if (r.any) {
    r.y = fitted_range(py, by, ay, 0.05);
  } else {
    r.y = {ay.to(ay.log ? 0.1 : 0.0), ay.to(ay.log ? 10.0 : 1.0)};
  }
  return r;
}

bool has_bars(const Series& s) { return !s.y.empty() && s.lo.size() == s.y.size() && s.hi.size() == s.y.size(); }

bool drawable(const Series& s, const Figure& f) {
  const Axis ax{f.logx}, ay{f.logy};
  for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
    if (ax.drawable(s.x[i]) && ay.drawable(s.y[i])) return true;
  return false;
}

std::string legend_title(const Series& s, const Figure& f, bool empty) {
  std::string title = s.label;
  if (s.fit) {
    const auto& law = s.fit->law;
    title += text(title.empty() ? "" : ": ", f.logx && f.logy ? "slope " : "exponent ", sig(law.exponent, 3));
    if (std::isfinite(law.ci_lo) && std::isfinite(law.ci_hi))
      title += text(" [", sig(law.ci_lo, 3), ", ", sig(law.ci_hi, 3), "]");
  }
  return empty ? title + " (no finite values)" : title;
}

// Ticks at 1, 2 and 5 times the powers of ten on a log axis spanning less than two decades (range in decades),
// where gnuplot would label one tick or none; finer steps within a single decade.
std::string log_tics(const char* axis, const Span& range) {
  if (range.width() >= 2) return "";
  const std::vector<double> steps = range.width() < 1 ? std::vector<double>{1, 1.5, 2, 3, 5, 7}
                                                      : std::vector<double>{1, 2, 5};
  std::string list;
  for (int decade = int(std::floor(range.lo)); decade <= int(std::ceil(range.hi)); ++decade)
    for (double m : steps) {
      const double v = m * std::pow(10.0, decade);
      if (std::log10(v) >= range.lo && std::log10(v) <= range.hi)
        list += (list.empty() ? "" : ", ") + gnuplot_number(v);
    }
  if (list.find(',') == std::string::npos) {  // a few percent of a decade: evenly spaced tics at a round step
    const double lo = std::pow(10.0, range.lo), hi = std::pow(10.0, range.hi);
    const double rough = (hi - lo) / 4, unit = std::pow(10.0, std::floor(std::log10(rough)));
    const double step = unit * (rough / unit < 2 ? 1 : rough / unit < 5 ? 2 : 5);
    list.clear();
    for (double v = std::ceil(lo / step) * step; v <= hi; v += step)
      list += (list.empty() ? "" : ", ") + gnuplot_number(v);
  }
  return list.empty() ? "" : text("set ", axis, "tics (", list, ")\n");
}

// Named ticks, or the data's own x where there are few enough to label each (sweeps over N, p or a scale).
std::string tics(const Figure& f, const Span& x_range, const Span& y_range) {
  std::ostringstream gp;
  if (!f.xtics.empty()) {
    std::size_t longest = 0;
    gp << "set xtics (";
    for (std::size_t i = 0; i < f.xtics.size(); ++i) {
      gp << (i ? ", " : "") << gp_quoted(f.xtics[i].second) << " " << gnuplot_number(f.xtics[i].first);
      longest = std::max(longest, characters(f.xtics[i].second));
    }
    gp << ")";
    if (longest > kUnrotatedTic) gp << " rotate by -35 left";
    gp << "\n";
  } else {
    const Axis ax{f.logx};
    std::set<double> values;
    for (const auto& s : f.series)
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
        if (ax.drawable(s.x[i]) && std::isfinite(s.y[i])) values.insert(s.x[i]);
    double closest = kInf;
    for (auto it = values.begin(); it != values.end() && std::next(it) != values.end(); ++it)
      closest = std::min(closest, ax.to(*std::next(it)) - ax.to(*it));
    if (values.size() >= 2 && values.size() <= 10 && closest >= x_range.width() / 20) {
      gp << "set xtics (";
      for (auto it = values.begin(); it != values.end(); ++it)
        gp << (it == values.begin() ? "" : ", ") << gnuplot_number(*it);
      gp << ")\n";
    } else if (f.logx) {
      gp << log_tics("x", x_range);
    }
  }
  if (f.logy && f.ytics.empty()) gp << log_tics("y", y_range);
  if (!f.ytics.empty()) {
    gp << "set ytics (";
    for (std::size_t i = 0; i < f.ytics.size(); ++i)
      gp << (i ? ", " : "") << gp_quoted(f.ytics[i].second) << " " << gnuplot_number(f.ytics[i].first);
    gp << ") font ',10'\n";
  }
  return gp.str();
}

}  // namespace

GnuplotInput gnuplot_input(const Figure& f, const std::string& data_file, const std::string& png_file) {
  const Axis ax{f.logx}, ay{f.logy};
  const auto range = ranges(f);
  GnuplotInput in;
  std::ostringstream data, gp;

  // The legend below the plot, in as many columns as its longest entry allows.
  std::vector<std::string> titles;
  std::size_t longest = 0, entries = 0;
  for (const auto& s : f.series) {
    titles.push_back(legend_title(s, f, !drawable(s, f)));
    longest = std::max(longest, characters(titles.back()));
    entries += !titles.back().empty();
  }
  const std::size_t columns =
      // about 8.5 px a character at font 10 plus the sample: gnuplot falls back to fewer columns (more rows, over the
      // x label) when its own measure of an entry is wider than this estimate
      entries == 0
          ? 1
          : std::clamp<std::size_t>(std::size_t(double(f.width - 60) / (double(longest + 8) * 8.5)), 1, entries);
  const std::size_t legend_rows = (entries + columns - 1) / columns;
  // The bottom margin (in lines) holds the tics, the x label and the legend's rows; rotated names take their
  // slanted height. The image grows by what the margin adds, so that the plot keeps its size.
  std::size_t longest_tic = 0;
  for (const auto& [at, name] : f.xtics) longest_tic = std::max(longest_tic, characters(name));
  const double slanted = longest_tic > kUnrotatedTic ? double(longest_tic) * 0.3 : 0.0;
  const double bottom = 4.5 + slanted + 1.4 * double(legend_rows);
  const int height = f.height + int((bottom - 4) * 17);

  gp << "set terminal pngcairo size " << f.width << "," << height << " noenhanced font 'sans,11'\n";
  gp << "set output " << gp_quoted(png_file) << "\n";
  gp << "set title " << gp_quoted(f.title) << " font ',12'\n";
  gp << "set xlabel " << gp_quoted(f.xlabel) << "\nset ylabel " << gp_quoted(f.ylabel) << "\n";
  gp << "set grid lc rgb '#dddddd' lw 1\nset border lc rgb '#444444'\n";
  if (entries)
    gp << "set key at screen 0.5, screen 0.01 center bottom horizontal maxcols " << columns
       << " reverse Left samplen 2 spacing 1.1 font ',10'\n";
  else gp << "unset key\n";
  gp << "set bmargin " << gnuplot_number(bottom) << "\n";
  if (f.logx) gp << "set logscale x\nset format x '%g'\n";  // %g keeps decades readable (1e-05, not 0.0000100)
  if (f.logy) gp << "set logscale y\nset format y '%g'\n";
  gp << "set xrange [" << gnuplot_number(ax.from(range.x.lo)) << ":" << gnuplot_number(ax.from(range.x.hi)) << "]\n";
  if (f.ytics.empty())
    gp << "set yrange [" << gnuplot_number(ay.from(range.y.lo)) << ":" << gnuplot_number(ay.from(range.y.hi)) << "]\n";
  else  // rows read top down
    gp << "set yrange [" << gnuplot_number(ay.from(range.y.hi)) << ":" << gnuplot_number(ay.from(range.y.lo)) << "]\n";
  if (f.right_margin > 0) gp << "set rmargin " << f.right_margin << "\n";
  gp << tics(f, range.x, range.y);
  for (double v : f.xlines)
    gp << "set arrow from first " << gnuplot_number(v) << ", graph 0 to first " << gnuplot_number(v)
       << ", graph 1 nohead dt 2 lw 1.5 lc rgb " << gp_quoted(kReferenceColour) << " back\n";
  for (double v : f.ylines)
    gp << "set arrow from graph 0, first " << gnuplot_number(v) << " to graph 1, first " << gnuplot_number(v)
       << " nohead lw 1 lc rgb '#999999' back\n";
  for (std::size_t i = 0; i < f.labels.size(); ++i) {
    const auto& l = f.labels[i];
    gp << "set label " << i + 1 << " " << gp_quoted(l.text) << " at graph " << gnuplot_number(l.x) << ", first "
       << gnuplot_number(l.y) << " left font '" << (l.bold ? "sans:Bold" : "sans") << ",10'"
       << (l.colour.empty() ? "" : " textcolor rgb " + gp_quoted(l.colour)) << " front\n";
  }
  if (!range.any && f.ytics.empty()) {
    gp << "set label 1000 " << gp_quoted("no finite values to draw") << " at graph 0.5, 0.5 center font ',14'\n";
    gp << "unset xtics\nunset ytics\n";
  }

  // One data block per series, then one per fitted line.
  std::vector<std::string> elements{"NaN notitle"};  // an empty figure still plots
  std::vector<std::string> references;
  for (std::size_t i = 0; i < f.series.size(); ++i) {
    const auto& s = f.series[i];
    const bool bars = has_bars(s);
    const Axis& bar_axis = s.x_bars ? ax : ay;
    const Span& bar_range = s.x_bars ? range.x : range.y;
    for (std::size_t p = 0; p < s.x.size() && p < s.y.size(); ++p) {
      const double at = s.x_bars ? s.x[p] : s.y[p];
      data << gnuplot_number(s.x[p]) << ' ' << gnuplot_number(s.y[p]) << ' '
           << gnuplot_number(bars ? bar_end(s.lo[p], at, bar_range, bar_axis) : at) << ' '
           << gnuplot_number(bars ? bar_end(s.hi[p], at, bar_range, bar_axis) : at) << '\n';
    }
    data << "\n\n";
    const std::string title = titles[i].empty() ? " notitle" : " title " + gp_quoted(titles[i]);
    if (s.reference) {  // drawn last, over the data: a guide the data follow would otherwise be hidden
      references.push_back(text(gp_quoted(data_file), " index ", i, " using 1:2 with lines lw 1.5 dt 2 lc rgb ",
                                gp_quoted(kReferenceColour), title));
      continue;
    }
    const std::string colour = s.colour.empty() ? kSeriesColours[i % kStyles] : s.colour;
    const std::string style = text(" lc rgb ", gp_quoted(colour), " pt ", kPointTypes[(i + i / kStyles) % kStyles],
                                   " ps 1 lw 1.5 dt ", dash_type(i));
    if (!drawable(s, f)) {
      elements.push_back("keyentry with points" + style + title);
      continue;
    }
    const bool lines = s.connect && !s.fit;  // a fitted series shows its points and the fitted line
    std::string with;
    if (bars)
      with = s.x_bars ? "using 1:2:3:4 with xerrorbars"
             : lines  ? "using 1:2:3:4 with yerrorlines"
                      : "using 1:2:3:4 with yerrorbars";
    else if (lines) with = s.x.size() > kDenseCurve ? "using 1:2 with lines" : "using 1:2 with linespoints";
    else with = "using 1:2 with points";
    elements.push_back(text(gp_quoted(data_file), " index ", i, " ", with, style, title));
  }
  std::size_t block = f.series.size();
  for (std::size_t i = 0; i < f.series.size(); ++i) {
    const auto& s = f.series[i];
    if (!s.fit || !drawable(s, f)) continue;
    const auto [lo, hi] = fit_span(s);
    if (!(lo > 0 && hi >= lo)) continue;
    const auto& law = s.fit->law;
    constexpr int kSamples = 40;
    for (int k = 0; k <= kSamples; ++k) {
      const double t = double(k) / kSamples;
      const double x = f.logx ? lo * std::pow(hi / lo, t) : lo + (hi - lo) * t;
      data << gnuplot_number(x) << ' ' << gnuplot_number(law.prefactor * std::pow(x, law.exponent)) << "\n";
    }
    data << "\n\n";
    const std::string colour = s.colour.empty() ? kSeriesColours[i % kStyles] : s.colour;
    elements.push_back(text(gp_quoted(data_file), " index ", block++, " using 1:2 with lines lw 1.5 dt ", dash_type(i),
                            " lc rgb ", gp_quoted(colour), " notitle"));
  }
  elements.insert(elements.end(), references.begin(), references.end());
  gp << "plot ";
  for (std::size_t i = 0; i < elements.size(); ++i) gp << (i ? ", \\\n     " : "") << elements[i];
  gp << "\n";
  in.script = gp.str();
  in.data = data.str();
  return in;
}

namespace {

bool gnuplot_available() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

// Runs gnuplot on the script file `script` (its name as an argument: never through a shell); returns its exit status
// and sets `error` to the last line it wrote to stderr.
int run_gnuplot(const std::string& script, std::string& error) {
  int err[2];
  if (::pipe(err) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawn_file_actions_addclose(&actions, err[0]);
  posix_spawn_file_actions_addclose(&actions, err[1]);
  std::string program = "gnuplot", file = script;
  char* argv[] = {program.data(), file.data(), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err[1]);
  if (spawned != 0) {
    ::close(err[0]);
    return -1;
  }
  std::string messages;
  char buffer[4096];
  for (ssize_t n; (n = ::read(err[0], buffer, sizeof buffer)) > 0;) messages.append(buffer, std::size_t(n));
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::istringstream lines(messages);
  for (std::string line; std::getline(lines, line);)
    if (line.find_first_not_of(" ^\t") != std::string::npos) error = line;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

bool draw_png(const Figure& f, const std::filesystem::path& dir, std::string& warning) {
  static const bool available = gnuplot_available();
  if (!available) {
    warning = "gnuplot not found: " + f.name + ".png not drawn";
    return false;
  }
  const auto stem = dir / text(".", f.name, ".", ::getpid());
  const auto data = stem.string() + ".dat", script = stem.string() + ".gp", png = stem.string() + ".png";
  const auto input = gnuplot_input(f, data, png);
  std::ofstream(data) << input.data;
  std::ofstream(script) << input.script;
  std::string error;
  const int rc = run_gnuplot(script, error);
  std::filesystem::remove(data);
  std::filesystem::remove(script);
  if (rc != 0 || !std::filesystem::exists(png)) {
    warning = text("gnuplot failed: ", f.name, ".png not drawn", error.empty() ? "" : " (gnuplot: " + error + ")");
    std::filesystem::remove(png);
    return false;
  }
  std::filesystem::rename(png, dir / (f.name + ".png"));
  return true;
}

}  // namespace attnlab::io
