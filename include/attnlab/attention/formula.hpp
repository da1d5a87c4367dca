#pragma once
// An activation written as a formula: h(x) of `expr:` or g(x) of `rowexpr:` in x (the logit S), N, d and named
// parameters. A recursive-descent parser builds a tree (nothing but the formula is ever evaluated); compiling it for
// one configuration folds every subtree free of x into a constant and leaves a tape of array operations on (value,
// derivative) pairs: forward-mode differentiation, exact, vectorised one operation over a block at a time.
#include <attnlab/core/types.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

// A malformed formula: the 1-based column of the fault within the formula and what was expected there.
class FormulaError : public std::invalid_argument {
 public:
  FormulaError(std::size_t position, const std::string& message);
  std::size_t position;
};

using FormulaParameters = std::map<std::string, double>;

class FormulaTape;

class Formula {
 public:
  enum class Op {
    constant,
    x,
    N,
    d,
    parameter,
    negate,
    add,
    subtract,
    multiply,
    divide,
    power,
    max,
    min,
    exp,
    log,
    sqrt,
    abs,
    sin,
    cos,
    tanh,
    relu,
    sigmoid
  };
  struct Node {
    Op op = Op::constant;
    double value = 0;    // constant
    std::string name{};  // parameter
    int a = -1, b = -1;  // operands
  };

  // Throws FormulaError on malformed text.
  static Formula parse(std::string_view text);
  // The tree printed with the fewest parentheses that keep it: parse(f.canonical()).canonical() == f.canonical().
  std::string canonical() const;
  // The names other than x, N and d, sorted: each must be given a value (--param name=value).
  std::vector<std::string> parameters() const;
  // The tape for one configuration; throws std::invalid_argument naming a parameter without a value.
  std::shared_ptr<const FormulaTape> compile(double N, double d, const FormulaParameters& values) const;

 private:
  std::vector<Node> nodes_;
  int root_ = -1;
  friend class FormulaParser;
};

// h and h' (or g and g') of a formula for one configuration, over arrays.
class FormulaTape {
 public:
  // h[j] = f(x[j]), dh[j] = f'(x[j]) for j < n.
  void evaluate(const double* x, Index n, double* h, double* dh) const;

  enum class Code {
    add,
    subtract,
    multiply,
    divide,
    power,
    max,
    min,  // slot op slot
    add_constant,
    multiply_constant,
    power_integer,
    power_constant,
    max_constant,
    min_constant,  // slot op c
    constant_minus,
    constant_over,
    constant_power,  // c op slot
    negate,
    exp,
    log,
    sqrt,
    abs,
    sin,
    cos,
    tanh,
    relu,
    sigmoid
  };
  struct Instruction {
    Code code;
    int a = 0, b = 0;  // operand slots; slot 0 is x
    double c = 0;      // the constant operand
  };
  std::vector<Instruction> program;  // instruction i writes slot i + 1
  int result = -1;                   // the slot of f; -1 where f does not depend on x: f = constant
  double constant = 0;
};

}  // namespace attnlab
