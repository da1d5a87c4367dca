#include <attnlab/attention/formula.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/core/vmath.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace attnlab {

FormulaError::FormulaError(std::size_t at, const std::string& message) : std::invalid_argument(message), position(at) {}

namespace {

using Op = Formula::Op;

struct FunctionName {
  const char* name;
  Op op;
  int arity;
};
constexpr FunctionName kFunctions[] = {
    {"exp", Op::exp, 1},         {"log", Op::log, 1}, {"sqrt", Op::sqrt, 1}, {"abs", Op::abs, 1},
    {"sin", Op::sin, 1},         {"cos", Op::cos, 1}, {"tanh", Op::tanh, 1}, {"relu", Op::relu, 1},
    {"sigmoid", Op::sigmoid, 1}, {"max", Op::max, 2}, {"min", Op::min, 2},   {"pow", Op::power, 2},
};

// Deep enough for any formula a person writes; bounds the recursion on hostile input.
constexpr int kMaxDepth = 64;

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

class FormulaParser {
 public:
  explicit FormulaParser(std::string_view text) : text_(text) {}

  Formula parse() {
    formula_.root_ = expression();
    skip_spaces();
    if (pos_ < text_.size()) fail("an operator or the end of the formula");
    return std::move(formula_);
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  Formula formula_;

  [[noreturn]] void fail(const std::string& expected) const {
    // quoted as excerpts: the message stays one printable line whatever the bytes
    const std::string found = pos_ < text_.size() ? text("'", excerpt(std::string(1, text_[pos_])), "'") : "the end";
    throw FormulaError(pos_ + 1, text("formula '", excerpt(std::string(text_), 80), "': at position ", pos_ + 1,
                                      " expected ", expected, " (found ", found, ")"));
  }

  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  bool accept(char c) {
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }

  int add(Formula::Node n) {
    formula_.nodes_.push_back(std::move(n));
    return static_cast<int>(formula_.nodes_.size()) - 1;
  }

  // Every nesting (a sign, parentheses, an argument, an exponent) passes through unary: its depth bound keeps hostile
  // input off the stack's end.
  void descend() {
    if (++depth_ > kMaxDepth) fail(text("at most ", kMaxDepth, " levels of nesting"));
  }

  int expression() {
    int left = term();
    for (;;) {
      if (accept('+')) left = add({Op::add, 0, {}, left, term()});
      else if (accept('-')) left = add({Op::subtract, 0, {}, left, term()});
      else return left;
    }
  }

  int term() {
    int left = unary();
    for (;;) {
      if (accept('*')) left = add({Op::multiply, 0, {}, left, unary()});
      else if (accept('/')) left = add({Op::divide, 0, {}, left, unary()});
      else return left;
    }
  }

  int unary() {
    descend();
    int result;
    if (accept('-')) {
      const int operand = unary();
      auto& n = formula_.nodes_[static_cast<std::size_t>(operand)];
      // a literal's sign is part of it, so that the canonical text of -2 is the number -2
      if (n.op == Op::constant) n.value = -n.value, result = operand;
      else result = add({Op::negate, 0, {}, operand});
    } else if (accept('+')) {
      result = unary();
    } else {
      result = power();
    }
    --depth_;
    return result;
  }

  int power() {
    const int base = atom();
    if (accept('^')) return add({Op::power, 0, {}, base, unary()});
    return base;
  }

  int atom() {
    skip_spaces();
    if (pos_ >= text_.size()) fail("a number, a name or '('");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const int inner = expression();
      if (!accept(')')) fail("')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (is_name_start(c)) return name();
    fail("a number, a name or '('");
  }

  int number() {
    double v = 0;
    const auto [end, error] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
    if (error == std::errc::result_out_of_range) fail("a number within the range of double");
    if (error != std::errc{}) fail("a number");
    pos_ = static_cast<std::size_t>(end - text_.data());
    return add({Op::constant, v});
  }

  int name() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    const std::string word(text_.substr(start, pos_ - start));
    const auto* f = std::find_if(std::begin(kFunctions), std::end(kFunctions),
                                 [&](const FunctionName& fn) { return word == fn.name; });
    skip_spaces();
    const bool call = pos_ < text_.size() && text_[pos_] == '(';
    if (f == std::end(kFunctions)) {
      if (call) {
        pos_ = start;
        fail("a function: exp, log, sqrt, abs, sin, cos, tanh, relu, sigmoid, max, min or pow");
      }
      if (word == "x") return add({Op::x});
      if (word == "N") return add({Op::N});
      if (word == "d") return add({Op::d});
      if (word == "pi") return add({Op::constant, 3.141592653589793});
      return add({Op::parameter, 0, word});
    }
    if (!call) fail(text("'(' after ", word));
    ++pos_;
    const int first = expression();
    int second = -1;
    if (f->arity == 2) {
      if (!accept(',')) fail(text("',' and a second argument of ", word));
      second = expression();
    }
    if (!accept(')')) fail(f->arity == 2 ? "')'" : text("')' (", word, " takes one argument)"));
    return add({f->op, 0, {}, first, second});
  }
};

Formula Formula::parse(std::string_view text) {
  if (text.empty()) throw FormulaError(1, "formula '': at position 1 expected a formula (found the end)");
  return FormulaParser(text).parse();
}

namespace {

// Binding strength: sums 1, products 2, a leading minus 3 (also a negative number), powers 4, atoms 5.
int precedence(const Formula::Node& n) {
  switch (n.op) {
    case Op::add:
    case Op::subtract: return 1;
    case Op::multiply:
    case Op::divide: return 2;
    case Op::negate: return 3;
    case Op::power: return 4;
    case Op::constant: return std::signbit(n.value) ? 3 : 5;
    default: return 5;
  }
}

const char* function_name(Op op) {
  for (const auto& f : kFunctions)
    if (f.op == op && op != Op::power) return f.name;
  return nullptr;
}

void print(const std::vector<Formula::Node>& nodes, int i, std::string& out) {
  const auto& n = nodes[static_cast<std::size_t>(i)];
  const auto operand = [&](int j, bool parens) {
    if (parens) out += '(';
    print(nodes, j, out);
    if (parens) out += ')';
  };
  const auto strength = [&](int j) { return precedence(nodes[static_cast<std::size_t>(j)]); };
  switch (n.op) {
    case Op::constant: {
      char buf[32];
      const auto end = std::to_chars(buf, buf + sizeof buf, n.value).ptr;
      out.append(buf, end);
      return;
    }
    case Op::x: out += 'x'; return;
    case Op::N: out += 'N'; return;
    case Op::d: out += 'd'; return;
    case Op::parameter: out += n.name; return;
    case Op::negate: out += '-', operand(n.a, strength(n.a) < 3); return;
    case Op::add:
    case Op::subtract:
    case Op::multiply:
    case Op::divide: {
      const int p = precedence(n);
      operand(n.a, strength(n.a) < p);
      out += n.op == Op::add ? '+' : n.op == Op::subtract ? '-' : n.op == Op::multiply ? '*' : '/';
      operand(n.b, strength(n.b) <= p);
      return;
    }
    case Op::power:
      operand(n.a, strength(n.a) <= 4);
      out += '^';
      operand(n.b, strength(n.b) < 3);
      return;
    default:
      out += function_name(n.op);
      out += '(';
      print(nodes, n.a, out);
      if (n.b >= 0) out += ',', print(nodes, n.b, out);
      out += ')';
  }
}

}  // namespace

std::string Formula::canonical() const {
  std::string out;
  print(nodes_, root_, out);
  return out;
}

std::vector<std::string> Formula::parameters() const {
  std::set<std::string> names;
  for (const auto& n : nodes_)
    if (n.op == Op::parameter) names.insert(n.name);
  return {names.begin(), names.end()};
}

namespace {

using Code = FormulaTape::Code;

// A compiled operand: a constant or a slot of the tape.
struct Operand {
  int slot = -1;  // -1: constant
  double value = 0;
};

double apply(Op op, double a, double b) {
  switch (op) {
    case Op::negate: return -a;
    case Op::add: return a + b;
    case Op::subtract: return a - b;
    case Op::multiply: return a * b;
    case Op::divide: return a / b;
    case Op::power: return std::pow(a, b);
    case Op::max: return std::max(a, b);
    case Op::min: return std::min(a, b);
    case Op::exp: return std::exp(a);
    case Op::log: return std::log(a);
    case Op::sqrt: return std::sqrt(a);
    case Op::abs: return std::abs(a);
    case Op::sin: return std::sin(a);
    case Op::cos: return std::cos(a);
    case Op::tanh: return std::tanh(a);
    case Op::relu: return a > 0 ? a : 0.0;
    case Op::sigmoid: return 1 / (1 + std::exp(-a));
    default: throw std::logic_error("not an operation");
  }
}

class Compiler {
 public:
  Compiler(const std::vector<Formula::Node>& nodes, double N, double d, const FormulaParameters& values)
      : nodes_(nodes), N_(N), d_(d), values_(values) {}

  FormulaTape compile(int root) {
    const auto r = operand(root);
    tape_.result = r.slot, tape_.constant = r.value;
    return std::move(tape_);
  }

 private:
  const std::vector<Formula::Node>& nodes_;
  double N_, d_;
  const FormulaParameters& values_;
  FormulaTape tape_;

  Operand emit(Code code, int a, int b = 0, double c = 0) {
    tape_.program.push_back({code, a, b, c});
    return {static_cast<int>(tape_.program.size())};
  }

  Operand operand(int i) {
    const auto& n = nodes_[static_cast<std::size_t>(i)];
    switch (n.op) {
      case Op::constant: return {-1, n.value};
      case Op::x: return {0};
      case Op::N: return {-1, N_};
      case Op::d: return {-1, d_};
      case Op::parameter: {
        const auto it = values_.find(n.name);
        if (it == values_.end())
          throw std::invalid_argument(
              text("param: the formula's parameter '", n.name, "' has no value (give --param ", n.name, "=VALUE)"));
        return {-1, it->second};
      }
      default: break;
    }
    const Operand a = operand(n.a), b = n.b >= 0 ? operand(n.b) : Operand{};
    if (a.slot < 0 && b.slot < 0) return {-1, apply(n.op, a.value, b.value)};
    if (n.b < 0) return emit(unary_code(n.op), a.slot);
    if (a.slot >= 0 && b.slot >= 0) return emit(binary_code(n.op), a.slot, b.slot);
    if (b.slot < 0) return with_constant_right(n.op, a.slot, b.value);
    return with_constant_left(n.op, a.value, b.slot);
  }

  static Code unary_code(Op op) {
    switch (op) {
      case Op::negate: return Code::negate;
      case Op::exp: return Code::exp;
      case Op::log: return Code::log;
      case Op::sqrt: return Code::sqrt;
      case Op::abs: return Code::abs;
      case Op::sin: return Code::sin;
      case Op::cos: return Code::cos;
      case Op::tanh: return Code::tanh;
      case Op::relu: return Code::relu;
      default: return Code::sigmoid;
    }
  }

  static Code binary_code(Op op) {
    switch (op) {
      case Op::add: return Code::add;
      case Op::subtract: return Code::subtract;
      case Op::multiply: return Code::multiply;
      case Op::divide: return Code::divide;
      case Op::power: return Code::power;
      case Op::max: return Code::max;
      default: return Code::min;
    }
  }

  // slot op c
  Operand with_constant_right(Op op, int a, double c) {
    switch (op) {
      case Op::add: return emit(Code::add_constant, a, 0, c);
      case Op::subtract: return emit(Code::add_constant, a, 0, -c);
      case Op::multiply: return emit(Code::multiply_constant, a, 0, c);
      case Op::divide: return emit(Code::multiply_constant, a, 0, 1 / c);  // a product costs less than a quotient
      case Op::max: return emit(Code::max_constant, a, 0, c);
      case Op::min: return emit(Code::min_constant, a, 0, c);
      default:  // power
        if (c == 1) return {a};
        if (c == 0) return {-1, 1.0};
        if (c == std::floor(c) && c > 1 && c <= 64) return emit(Code::power_integer, a, 0, c);
        return emit(Code::power_constant, a, 0, c);
    }
  }

  // c op slot
  Operand with_constant_left(Op op, double c, int b) {
    switch (op) {
      case Op::add: return emit(Code::add_constant, b, 0, c);
      case Op::subtract: return emit(Code::constant_minus, b, 0, c);
      case Op::multiply: return emit(Code::multiply_constant, b, 0, c);
      case Op::divide: return emit(Code::constant_over, b, 0, c);
      case Op::max: return emit(Code::max_constant, b, 0, c);
      case Op::min: return emit(Code::min_constant, b, 0, c);
      default: return emit(Code::constant_power, b, 0, c);
    }
  }
};

}  // namespace

std::shared_ptr<const FormulaTape> Formula::compile(double N, double d, const FormulaParameters& values) const {
  return std::make_shared<const FormulaTape>(Compiler(nodes_, N, d, values).compile(root_));
}

namespace {

// x^n as the built-in x^p computes it (r = x^(n−1), h = r·x, h' = n·r), unrolled for the usual powers.
template <int P>
void power_block(const double* a, const double* da, Index n, int p, double* o, double* d) {
  const int q = P > 0 ? P : p;
#pragma omp simd
  for (Index j = 0; j < n; ++j) {
    double r = 1;
    for (int k = 1; k < q; ++k) r *= a[j];
    o[j] = r * a[j];
    d[j] = r * q * da[j];
  }
}

constexpr Index kBlock = 256;

}  // namespace

void FormulaTape::evaluate(const double* x, Index n, double* h, double* dh) const {
  if (result < 0) {
    std::fill(h, h + n, constant);
    std::fill(dh, dh + n, 0.0);
    return;
  }
  const std::size_t slots = program.size() + 1;
  thread_local std::vector<double> values, tangents;  // capacity kept: no allocation once warm
  if (values.size() < slots * kBlock) values.resize(slots * kBlock), tangents.resize(slots * kBlock);
  std::fill(tangents.begin(), tangents.begin() + kBlock, 1.0);  // dx/dx
  for (Index j0 = 0; j0 < n; j0 += kBlock) {
    const Index m = std::min(kBlock, n - j0);
    std::copy(x + j0, x + j0 + m, values.begin());
    for (std::size_t i = 0; i < program.size(); ++i) {
      const auto& [code, ia, ib, c] = program[i];
      const double *a = values.data() + ia * kBlock, *da = tangents.data() + ia * kBlock;
      const double *b = values.data() + ib * kBlock, *db = tangents.data() + ib * kBlock;
      double *o = values.data() + (i + 1) * kBlock, *d = tangents.data() + (i + 1) * kBlock;
      switch (code) {
        case Code::add:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] + b[j], d[j] = da[j] + db[j];
          break;
        case Code::subtract:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] - b[j], d[j] = da[j] - db[j];
          break;
        case Code::multiply:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] * b[j], d[j] = da[j] * b[j] + a[j] * db[j];
          break;
        case Code::divide:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] / b[j], d[j] = (da[j] - o[j] * db[j]) / b[j];
          break;
        case Code::power:  // the log term only where the exponent varies: a negative base keeps a finite h'
          for (Index j = 0; j < m; ++j) {
            o[j] = std::pow(a[j], b[j]);
            d[j] = b[j] * std::pow(a[j], b[j] - 1) * da[j] + (db[j] == 0 ? 0.0 : o[j] * std::log(a[j]) * db[j]);
          }
          break;
        case Code::max:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] >= b[j] ? a[j] : b[j], d[j] = a[j] >= b[j] ? da[j] : db[j];
          break;
        case Code::min:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] <= b[j] ? a[j] : b[j], d[j] = a[j] <= b[j] ? da[j] : db[j];
          break;
        case Code::add_constant:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] + c, d[j] = da[j];
          break;
        case Code::multiply_constant:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = c * a[j], d[j] = c * da[j];
          break;
        case Code::power_integer: {
          const int p = static_cast<int>(c);
          if (p == 2) power_block<2>(a, da, m, p, o, d);
          else if (p == 3) power_block<3>(a, da, m, p, o, d);
          else if (p == 4) power_block<4>(a, da, m, p, o, d);
          else power_block<0>(a, da, m, p, o, d);
          break;
        }
        case Code::power_constant:
          for (Index j = 0; j < m; ++j) o[j] = std::pow(a[j], c), d[j] = c * std::pow(a[j], c - 1) * da[j];
          break;
        case Code::max_constant:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] > c ? a[j] : c, d[j] = a[j] > c ? da[j] : 0.0;
          break;
        case Code::min_constant:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] < c ? a[j] : c, d[j] = a[j] < c ? da[j] : 0.0;
          break;
        case Code::constant_minus:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = c - a[j], d[j] = -da[j];
          break;
        case Code::constant_over:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = c / a[j], d[j] = -o[j] / a[j] * da[j];
          break;
        case Code::constant_power: {
          const double log_c = std::log(c);
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = vmath::exp(log_c * a[j]), d[j] = o[j] * log_c * da[j];
          break;
        }
        case Code::negate:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = -a[j], d[j] = -da[j];
          break;
        case Code::exp:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = vmath::exp(a[j]);
#pragma omp simd
          for (Index j = 0; j < m; ++j) d[j] = o[j] * da[j];
          break;
        case Code::log:
          for (Index j = 0; j < m; ++j) o[j] = std::log(a[j]), d[j] = da[j] / a[j];
          break;
        case Code::sqrt:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = std::sqrt(a[j]), d[j] = 0.5 * da[j] / o[j];
          break;
        case Code::abs:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = std::abs(a[j]), d[j] = a[j] < 0 ? -da[j] : da[j];
          break;
        case Code::sin:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = vmath::sin(a[j]);
#pragma omp simd
          for (Index j = 0; j < m; ++j) d[j] = vmath::cos(a[j]) * da[j];
          break;
        case Code::cos:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = vmath::cos(a[j]);
#pragma omp simd
          for (Index j = 0; j < m; ++j) d[j] = -vmath::sin(a[j]) * da[j];
          break;
        case Code::tanh:
          for (Index j = 0; j < m; ++j) o[j] = std::tanh(a[j]), d[j] = (1 - o[j] * o[j]) * da[j];
          break;
        case Code::relu:
#pragma omp simd
          for (Index j = 0; j < m; ++j) o[j] = a[j] > 0 ? a[j] : 0.0, d[j] = a[j] > 0 ? da[j] : 0.0;
          break;
        case Code::sigmoid: {  // as the built-in: e^{−|x|} never overflows
          for (Index j = 0; j < m; ++j) {
            const double e = std::exp(-std::abs(a[j])), s = a[j] >= 0 ? 1 / (1 + e) : e / (1 + e);
            o[j] = s, d[j] = s * (1 - s) * da[j];
          }
          break;
        }
      }
    }
    const double* r = values.data() + result * kBlock;
    const double* dr = tangents.data() + result * kBlock;
    std::copy(r, r + m, h + j0);
    std::copy(dr, dr + m, dh + j0);
  }
}

}  // namespace attnlab
