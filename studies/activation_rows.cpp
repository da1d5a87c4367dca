// Any registered activation on rows of your own: values, row sums, norms and Jacobian norms per row.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) { return attnlab::io::run_study(argc, argv, attnlab::io::activation_rows_study()); }
