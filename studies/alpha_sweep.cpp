// The alpha_sweep training sweep (see io/training_sweep.hpp): resumable, shareable between processes, --quick for CI.
#include <attnlab/io/training_sweep.hpp>

int main(int argc, char** argv) { return attnlab::io::run_study(argc, argv, attnlab::io::training_sweep_study("alpha_sweep")); }
