// The attnlab Python module's C++ half (attnlab._core): activations and pseudo-inverses on NumPy arrays, the claim
// registry, and the studies run in this process with the GIL released. attnlab/__init__.py adds the pandas side.
#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/soft/pinv.hpp>
#include <attnlab/studies/studies.hpp>
#include <attnlab/theory/claims.hpp>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <stdexcept>

namespace py = pybind11;
using namespace attnlab;

namespace {

// A float64, C-contiguous, finite array of `dims` dimensions, or a ValueError that says which of these it is not:
// nothing is converted behind the caller's back.
py::array_t<double> checked(const py::handle& object, const char* what, int dims) {
  if (!py::isinstance<py::array>(object))
    throw std::invalid_argument(
        text(what, ": expected a NumPy array, got ", std::string(py::str(py::type::of(object)))));
  auto a = py::reinterpret_borrow<py::array>(object);
  if (!a.dtype().is(py::dtype::of<double>()))
    throw std::invalid_argument(text(what, ": expected float64, got ", std::string(py::str(a.dtype()))));
  if (a.ndim() != dims)
    throw std::invalid_argument(text(what, ": expected a ", dims, "-D array, got ", a.ndim(), "-D"));
  if (!(a.flags() & py::array::c_style)) throw std::invalid_argument(text(what, ": expected a C-contiguous array"));
  auto d = py::reinterpret_borrow<py::array_t<double>>(a);
  const double* p = d.data();
  for (py::ssize_t i = 0; i < d.size(); ++i)
    if (!std::isfinite(p[i])) throw std::invalid_argument(text(what, ": entry ", i, " is not finite (", p[i], ")"));
  return d;
}

struct PyActivation {
  ActivationSpec spec;

  // ϕ of each row of `rows` (rows × n): each row is the argument x of ϕ(x), N = n.
  py::array_t<double> value(const py::handle& rows_object) const {
    const auto rows = checked(rows_object, "rows", 2);
    const Index r = rows.shape(0), n = rows.shape(1);
    if (n < 1) throw std::invalid_argument("rows: a row needs at least one entry");
    const auto act = spec.resolve(n, 1);
    py::array_t<double> out({r, n});
    for (Index i = 0; i < r; ++i) row_forward(act, rows.data() + i * n, n, out.mutable_data() + i * n);
    return out;
  }

  // J(x_i) t_i for each row x_i and tangent t_i.
  py::array_t<double> jvp(const py::handle& rows_object, const py::handle& tangents_object) const {
    const auto rows = checked(rows_object, "rows", 2);
    const auto tangents = checked(tangents_object, "tangents", 2);
    if (rows.shape(0) != tangents.shape(0) || rows.shape(1) != tangents.shape(1))
      throw std::invalid_argument(text("tangents: shape ", tangents.shape(0), " x ", tangents.shape(1),
                                       " differs from rows' ", rows.shape(0), " x ", rows.shape(1)));
    const Index r = rows.shape(0), n = rows.shape(1);
    const auto act = spec.resolve(n, 1);
    py::array_t<double> out({r, n});
    VectorD y(n);
    for (Index i = 0; i < r; ++i) {
      RowJacobian J;
      row_forward(act, rows.data() + i * n, n, y.data(), &J);
      J.jvp(tangents.data() + i * n, out.mutable_data() + i * n);
    }
    return out;
  }

  // ∂ϕ_j/∂x_k of one row, n × n.
  py::array_t<double> row_jacobian(const py::handle& row_object) const {
    const auto row = checked(row_object, "row", 1);
    const Index n = row.shape(0);
    VectorD y(n);
    RowJacobian J;
    row_forward(spec.resolve(n, 1), row.data(), n, y.data(), &J);
    const MatrixD dense = J.dense();
    py::array_t<double> out({n, n});
    for (Index j = 0; j < n; ++j)
      for (Index k = 0; k < n; ++k) out.mutable_at(j, k) = dense(j, k);
    return out;
  }
};

PyActivation make_activation(const std::string& name, int p, const std::string& k, double alpha,
                             const FormulaParameters& params) {
  PyActivation a{ActivationSpec::parse(name)};
  if (a.spec.formula) a.spec.params = params;
  if (a.spec.transforms.qk_layernorm)
    throw std::invalid_argument(text("activation: '", name, "': +qkln normalises q and k, not rows"));
  a.spec.p = p;
  a.spec.k = KScale::parse(k);
  a.spec.alpha = alpha;
  a.spec.validate();
  return a;
}

py::dict pseudo_inverse_with_trace(const py::handle& matrix, const std::string& method, int iterations,
                                   double tolerance, bool trace) {
  const auto a = checked(matrix, "A", 2);
  MatrixD A(a.shape(0), a.shape(1));
  for (Index i = 0; i < A.rows(); ++i)
    for (Index j = 0; j < A.cols(); ++j) A(i, j) = a.at(i, j);
  PinvOptions options{
      .method = parse_pinv_method(method), .max_iterations = iterations, .tolerance = tolerance, .trace = trace};
  options.validate();
  PinvResult r;
  {
    py::gil_scoped_release unlocked;
    r = attnlab::pseudo_inverse(A, options);
  }
  py::array_t<double> X({r.inverse.rows(), r.inverse.cols()});
  for (Index i = 0; i < r.inverse.rows(); ++i)
    for (Index j = 0; j < r.inverse.cols(); ++j) X.mutable_at(i, j) = r.inverse(i, j);
  py::dict steps;
  for (const char* key : {"iteration", "residual", "error", "residual_shifted", "error_shifted"})
    steps[key] = py::list();
  for (const auto& s : r.trace) {
    steps["iteration"].cast<py::list>().append(s.iteration);
    steps["residual"].cast<py::list>().append(s.residual);
    steps["error"].cast<py::list>().append(s.error);
    steps["residual_shifted"].cast<py::list>().append(s.residual_shifted);
    steps["error_shifted"].cast<py::list>().append(s.error_shifted);
  }
  py::dict out;
  out["inverse"] = X;
  out["trace"] = steps;
  out["iterations"] = r.iterations;
  out["alpha"] = r.alpha;
  out["converged"] = r.converged;
  out["diverged"] = r.diverged;
  out["status"] = r.status;
  return out;
}

// Runs a study as its binary would with these arguments and returns the summary the binary prints on stdout, printing
// none of it; the error line raises ValueError (bad input, exit 2) or RuntimeError (a failure, exit 1).
// `progress(stage, task, done, total)` is called with the GIL held. `quiet`: no progress or closing lines on stderr.
std::string run_study_here(const std::string& name, const std::vector<std::string>& args, const py::object& progress,
                           bool quiet) {
  const auto study = studies::find_study(name);
  study::StudyRunHooks hooks;
  hooks.quiet = quiet;
  if (!progress.is_none())
    hooks.progress = [progress](const std::string& stage, const std::string& task, std::uint32_t done,
                                std::uint32_t total) {
      py::gil_scoped_acquire locked;
      progress(stage, task, done, total);
    };
  int code = 0;
  {
    py::gil_scoped_release unlocked;
    code = study::run_study(study, args, hooks);
  }
  if (code == 2) throw std::invalid_argument(hooks.error);
  if (code != 0) throw std::runtime_error(hooks.error);
  return hooks.summary;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "attnlab's C++ core: activations, pseudo-inverses, claims and studies (attnlab re-exports its API)";
  py::class_<PyActivation>(m, "Activation", "A registered activation phi with its exact row Jacobian.")
      .def_property_readonly(
          "label", [](const PyActivation& a) { return a.spec.label(); },
          "The name the studies print, e.g. 'x^3/sqrtN (inside)'.")
      .def("value", &PyActivation::value, py::arg("rows"),
           "phi of each row of `rows` (float64, C-contiguous, finite, rows x n): each row is the argument x of phi(x), "
           "N = n. Returns an array of the same shape.")
      .def("jvp", &PyActivation::jvp, py::arg("rows"), py::arg("tangents"),
           "J(x_i) t_i for each row x_i of `rows` and t_i of `tangents` (both rows x n): the Jacobian-vector products.")
      .def("row_jacobian", &PyActivation::row_jacobian, py::arg("row"),
           "The n x n Jacobian d phi_j / d x_k of one row (a 1-D array of n entries).");
  m.def("activation", &make_activation, py::arg("name"), py::arg("p") = 3, py::arg("k") = "sqrtN",
        py::arg("alpha") = 1.0, py::arg("params") = FormulaParameters{},
        "The activation `name` (any name of activation_names(), with +prenorm or +prenorm-released; not +qkln, which "
        "acts on q and k), with the exponent p and scale k of x^p/k ('1', 'sqrtN' or a number) and the alpha of "
        "h(S)/N^alpha; or a formula, 'expr:x^3/sqrt(N)' (phi = h(x)) or 'rowexpr:exp(x)' (phi = g/sum g), whose "
        "parameters `params` (a dict of name: value) sets. An unknown name or a malformed formula raises ValueError.");
  m.def(
      "activation_names",
      [] {
        std::vector<std::string> names;
        for (const auto& info : activation_registry()) names.push_back(info.name);
        return names;
      },
      "The registered activation names, as --activation takes them.");
  m.def("pseudo_inverse", &pseudo_inverse_with_trace, py::arg("A"), py::arg("method") = "newton",
        py::arg("iterations") = 0, py::arg("tolerance") = 1e-10, py::arg("trace") = true,
        "The pseudo-inverse of A as a dict: inverse, trace (per-iteration columns) and the run's summary.");
  m.def(
      "claims",
      [] {
        std::vector<std::map<std::string, std::string>> rows;
        for (const auto& c : claim_registry().all())
          rows.push_back({{"id", c.id}, {"source", c.source}, {"statement", c.statement}});
        return rows;
      },
      "Every registered claim as a dict of id, source and statement.");
  m.def(
      "study_names", [] { return studies::study_names(); }, "The studies run_study takes, as named in build/studies/.");
  m.def("run_study", &run_study_here, py::arg("name"), py::arg("args"), py::arg("progress") = py::none(),
        py::arg("quiet") = true,
        "Runs study `name` with the command line's arguments `args` (a list of strings) in this process, without the "
        "GIL, and returns the summary the binary prints on stdout (printing none of it); quiet=False writes the "
        "progress and closing lines on stderr, quiet=True warnings only.");
}
