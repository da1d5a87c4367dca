// Trains the ViT mini-trainer once: loss, accuracy and attention-norm curves (see io/train_study.hpp).
#include <attnlab/io/train_study.hpp>

int main(int argc, char** argv) { return attnlab::io::run_study(argc, argv, attnlab::io::train_study()); }
