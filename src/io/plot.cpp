#include <attnlab/core/text.hpp>
#include <attnlab/io/plot.hpp>

#include <unistd.h>

#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace attnlab::io {
namespace {

// gnuplot single-quoted string: no escapes, '' stands for a quote.
std::string quoted(const std::string& s) {
  std::string q;
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return "'" + q + "'";
}

bool gnuplot_available() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

}  // namespace

bool draw_png(const Figure& f, const std::filesystem::path& dir, std::string& warning) {
  static const bool available = gnuplot_available();
  if (!available) {
    warning = "gnuplot not found: " + f.name + ".png not drawn";
    return false;
  }
  const auto stem = dir / text(".", f.name, ".", ::getpid());
  const auto data = stem.string() + ".dat", png = stem.string() + ".png";
  {
    std::ofstream out(data);
    out.precision(12);
    for (const auto& s : f.series) {
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        const bool bars = s.lo.size() == s.y.size();
        out << s.x[i] << ' ' << s.y[i] << ' ' << (bars ? s.lo[i] : s.y[i]) << ' ' << (bars ? s.hi[i] : s.y[i]) << '\n';
      }
      out << "\n\n";
    }
  }
  std::ostringstream gp;
  {
    gp << "set terminal pngcairo size 960,640 noenhanced font 'sans,11'\n";
    gp << "set output " << quoted(png) << "\n";
    gp << "set title " << quoted(f.title) << "\n";
    gp << "set xlabel " << quoted(f.xlabel) << " noenhanced\nset ylabel " << quoted(f.ylabel) << "\n";
    gp << "set key outside right top\nset grid\n";
    // %g keeps decades readable (1e-05 rather than 0.0000100).
    if (f.logx) gp << "set logscale x\nset format x '%g'\n";
    if (f.logy) gp << "set logscale y\nset format y '%g'\n";
    if (!f.xtics.empty()) {
      gp << "set xtics rotate by -35 left (";
      for (std::size_t i = 0; i < f.xtics.size(); ++i)
        gp << (i ? ", " : "") << quoted(f.xtics[i].second) << " " << f.xtics[i].first;
      gp << ")\nset xrange [0.5:" << f.xtics.size() + 0.5 << "]\nset bmargin 12\n";
    }
    gp << "plot ";
    for (std::size_t i = 0; i < f.series.size(); ++i) {
      const auto& s = f.series[i];
      gp << (i ? ", " : "") << quoted(data) << " index " << i
         << (s.connect ? " using 1:2:3:4 with yerrorlines pt 7 ps 0.8" : " using 1:2:3:4 with yerrorbars pt 7 ps 1.2")
         << " title " << quoted(s.label);
    }
    gp << "\n";
  }
  // The script goes through a pipe: file names never pass through a shell.
  int rc = -1;
  if (FILE* pipe = ::popen("gnuplot 2>/dev/null", "w")) {
    const std::string script = gp.str();
    std::fwrite(script.data(), 1, script.size(), pipe);
    rc = ::pclose(pipe);
  }
  std::filesystem::remove(data);
  if (rc != 0 || !std::filesystem::exists(png)) {
    warning = "gnuplot failed: " + f.name + ".png not drawn";
    std::filesystem::remove(png);
    return false;
  }
  std::filesystem::rename(png, dir / (f.name + ".png"));
  return true;
}

}  // namespace attnlab::io
