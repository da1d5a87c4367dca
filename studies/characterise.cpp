// The characterise study, as registered in src/studies/studies.cpp.
#include <attnlab/studies/studies.hpp>

int main(int argc, char** argv) { return attnlab::io::run_study(argc, argv, attnlab::io::find_study("characterise")); }
