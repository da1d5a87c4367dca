// The periodic_saturation study, as registered in src/studies/studies.cpp.
#include <attnlab/studies/main.hpp>

int main(int argc, char** argv) { return attnlab::studies::study_main(argc, argv, "periodic_saturation"); }
