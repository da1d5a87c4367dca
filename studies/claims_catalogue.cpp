// Prints docs/claims.md, the claim catalogue, from the registry.
#include <attnlab/io/report.hpp>

#include <iostream>

int main() { std::cout << attnlab::io::claim_catalogue_markdown(); }
